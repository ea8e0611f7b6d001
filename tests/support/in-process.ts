/**
 * Use cases in process, on a fresh database: a tenant with an API key and its
 * ServiceContext, as lib/mcp/request-context.ts builds one for the key, and an
 * agent that calls the tools' use cases directly, with the same answers as the
 * HTTP client in mcp-client.ts (the structured content as JSON, an error as the
 * text the MCP door writes, code first). A test of a rule runs here; a test of
 * the wire (schemas as listed, errors as MCP results, keys) runs over HTTP.
 */
import { afterAll, beforeAll } from "vitest";
import type { Database, DatabaseHandle } from "@/lib/db/client";
import type { ToolDefinition } from "@/lib/mcp/define-tool";
import { serviceContextFor } from "@/lib/mcp/request-context";
import { toolError } from "@/lib/mcp/tool-result";
import { TOOLS } from "@/lib/mcp/tools";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import { authenticateOAuthToken } from "@/lib/services/accounts/oauth-token-auth";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type Backend, freshDatabase } from "./databases";
import {
  plainResult,
  type Readable,
  type ToolAnswer,
  type ToolName,
  type ToolOutput,
} from "./mcp-client";
import { connectApp, REDIRECT_URI, RESOURCE, registerInProcess } from "./oauth-in-process";

/** A new tenant with one admin and one API key; the context is the key's. */
export async function tenantContext(
  db: Database,
  name: string,
  options: Partial<Pick<ServiceContext, "stallThresholdSeconds" | "stepLeaseSeconds" | "llm">> = {},
): Promise<ServiceContext> {
  const email = `${name.toLowerCase()}@example.com`;
  const user = await createUser(db, {
    email,
    password: "a long enough password",
    role: "admin",
    tenant: name,
  });
  const key = await createApiKey(db, { email, name: `${name} agent` });
  return {
    db,
    tenantId: user.tenantId,
    actor: { type: "api_key", id: key.apiKeyId, label: `key "${name} agent" of ${email}` },
    stallThresholdSeconds: 1800,
    ...options,
  };
}

const TOOLS_BY_NAME = new Map<string, ToolDefinition>(
  TOOLS.map((tool) => [tool.name, tool as ToolDefinition]),
);

/** An agent whose calls run the tools' use cases in this process, with `ctx`. */
export function inProcessAgent(ctx: ServiceContext) {
  async function call(name: string, args: Record<string, unknown> = {}): Promise<ToolAnswer> {
    const tool = TOOLS_BY_NAME.get(name);
    if (!tool) throw new Error(`No tool ${name}`);
    try {
      const text = JSON.stringify(await tool.run(ctx, args));
      return { isError: false, text, data: JSON.parse(text) };
    } catch (error) {
      const failure = toolError(error);
      const first = failure.content[0];
      return { isError: true, text: first?.type === "text" ? first.text : "", data: undefined };
    }
  }

  /** Calls a tool that must succeed and returns its answer, typed by the tool's output schema. */
  function ok<Name extends ToolName>(
    name: Name,
    args?: Record<string, unknown>,
  ): Promise<Readable<ToolOutput<Name>>>;
  async function ok(name: string, args: Record<string, unknown> = {}): Promise<unknown> {
    const answer = await call(name, args);
    if (answer.isError) throw new Error(`${name} failed: ${answer.text}`);
    return answer.data;
  }

  /** Calls a tool that must fail and returns its error text. */
  async function fails(name: string, args: Record<string, unknown> = {}): Promise<string> {
    const answer = await call(name, args);
    if (!answer.isError) throw new Error(`${name} should have failed but returned ${answer.text}`);
    return answer.text;
  }

  /** submit_step_result with a plain result (`plainResult`). */
  const submit = (planId: string, stepId: string, extra: Record<string, unknown> = {}) =>
    ok("submit_step_result", plainResult(planId, stepId, extra));

  return { ctx, call, ok, fails, submit };
}

export type InProcessAgent = ReturnType<typeof inProcessAgent>;

/**
 * Tenant Alpha's admin as a person signed in to Cairn: the web door's context
 * (`userContext`), on the agent's tenant and database.
 */
export async function signedInAdmin(
  db: Database,
  agentCtx: ServiceContext,
): Promise<ServiceContext & { actor: { id: string } }> {
  const [admin] = await db.query.users.findMany({
    where: (users, { eq }) => eq(users.email, "alpha@example.com"),
  });
  if (!admin) throw new Error("the seeded admin is missing");
  return {
    ...agentCtx,
    actor: { type: "user", id: admin.id, label: "Alpha Admin <alpha@example.com>" },
  };
}

/**
 * A new member of the agent's tenant (`tenant`, by name) as a person signed in
 * to Cairn: their id and the web door's context, on the agent's database.
 */
export async function signedInMember(
  agentCtx: ServiceContext,
  tenant: string,
  person: { email: string; label: string; role?: "admin" | "researcher" },
): Promise<{ userId: string; ctx: ServiceContext }> {
  const { userId } = await createUser(agentCtx.db, {
    email: person.email,
    password: "a long enough password",
    role: person.role ?? "researcher",
    tenant,
  });
  return { userId, ctx: { ...agentCtx, actor: { type: "user", id: userId, label: person.label } } };
}

/** Typed steps for create_research_plan: `Step n: do the <type> work.` */
export const planSteps = (...types: string[]) =>
  types.map((stepType, i) => ({
    stepType,
    instructions: `Step ${i + 1}: do the ${stepType} work.`,
  }));

/** A server-run step whose tool fails here (no model is configured), so its plan pauses. */
export const extractStep = {
  stepType: "extract",
  instructions: "Extract prices.",
  tool: "extract_data",
  arguments: {
    schema: { type: "object", properties: { price: { type: "number" } } },
    text: "A heat pump costs 9000 euros.",
  },
};

/**
 * A fresh database with tenant Alpha, for the enclosing describe: its hooks open
 * the database before the tests and close it after. Read `agent` in the tests.
 */
export function useFreshTenant(
  backend: Backend,
  options: Parameters<typeof tenantContext>[2] = {},
): { agent: InProcessAgent; handle: DatabaseHandle } {
  const state = {} as { agent: InProcessAgent; handle: DatabaseHandle };
  beforeAll(async () => {
    state.handle = await freshDatabase(backend);
    state.agent = inProcessAgent(await tenantContext(state.handle.db, "Alpha", options));
  });
  afterAll(async () => {
    await state.handle?.close();
  });
  return state;
}

/**
 * A connected app as the MCP route sees it: registered as `clientName`,
 * approved by `person` in the consent flow, its token exchanged and checked
 * as the route checks it; an agent acting through it, and its `client_id`.
 */
export async function connectedAppAgent(
  db: Database,
  person: ServiceContext & { actor: { id: string } },
  clientName: string,
): Promise<{ clientId: string; agent: InProcessAgent }> {
  const registered = await registerInProcess(db, {
    redirect_uris: [REDIRECT_URI],
    client_name: clientName,
  });
  const user = { userId: person.actor.id, tenantId: person.tenantId };
  const { clientId, accessToken } = await connectApp(db, user, String(registered.body.client_id));
  const app = await authenticateOAuthToken(db, accessToken, RESOURCE);
  if (!app) throw new Error("the connected app's token was refused");
  const ctx = serviceContextFor(
    { getDb: async () => db, stallThresholdSeconds: person.stallThresholdSeconds },
    db,
    { kind: "oauth_app", credentialId: app.grantId, ...app },
  );
  return { clientId, agent: inProcessAgent(ctx) };
}
