/**
 * Plans as MCP resources, for clients that browse resources to resume work:
 * `cairn://plans/active` lists the tenant's active plans, and
 * `cairn://plans/{planId}` is one plan's full context (the same as
 * get_research_context, read without recording a resumed session). Everything
 * is scoped to the API key's tenant: another tenant's plan is "not found".
 */
import {
  type ListResourceTemplatesResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  ResourceNotFoundError,
} from "@modelcontextprotocol/server";
import { isAppError } from "../plan-engine/app-error";
import { listActivePlans } from "../services/plans/list-active-plans";
import { readPlanContext } from "../services/research/research-context";
import type { ServiceContext } from "../services/shared/context";
import { isCardUri, readCard } from "./apps";
import { type CairnServerDeps, principalOf, serviceContextFor } from "./request-context";
import { withoutInternals } from "./tool-result";

export const ACTIVE_PLANS_URI = "cairn://plans/active";
const PLAN_URI_PREFIX = "cairn://plans/";
const PLAN_URI =
  /^cairn:\/\/plans\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/i;
const JSON_TYPE = "application/json";

export const planUri = (planId: string) => `${PLAN_URI_PREFIX}${planId}`;

const ACTIVE_PLANS_RESOURCE: Resource = {
  uri: ACTIVE_PLANS_URI,
  name: "active-plans",
  title: "Active research plans",
  description:
    "This account's plans that are not finished, most recently active first, with status and progress. Read a plan's own resource to resume it.",
  mimeType: JSON_TYPE,
};

const TEMPLATES: ListResourceTemplatesResult["resourceTemplates"] = [
  {
    uriTemplate: `${PLAN_URI_PREFIX}{planId}`,
    name: "plan",
    title: "A research plan's full context",
    description:
      "Everything about one plan: steps with results and reports, branching conditions, reviews, the skill execution, the first artifacts in full (artifactsTotal counts them all; get_research_context pages through the rest with artifactsCursor), the newest deliverable and feedback.",
    mimeType: JSON_TYPE,
  },
];

/**
 * A missing resource. Revision 2026-07-28 answers it -32602 (Invalid params),
 * and the SDK sends that code on every revision, with the uri in the data.
 */
function notFound(uri: string): ResourceNotFoundError {
  return new ResourceNotFoundError(
    uri,
    `Resource not found: ${uri}. Read ${ACTIVE_PLANS_URI} for the plans of this account.`,
  );
}

async function contextOf(
  deps: CairnServerDeps,
  authInfo: { extra?: Record<string, unknown> } | undefined,
): Promise<ServiceContext> {
  const principal = principalOf(authInfo);
  if (!principal)
    throw new ProtocolError(
      ProtocolErrorCode.InvalidRequest,
      "This request carries no valid API key.",
    );
  return serviceContextFor(deps, await deps.getDb(), principal);
}

export function registerCairnResources(server: McpServer, deps: CairnServerDeps): void {
  server.server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: TEMPLATES,
  }));

  server.server.setRequestHandler(
    "resources/list",
    withoutInternals(async (_request, requestCtx) => {
      const ctx = await contextOf(deps, requestCtx.http?.authInfo);
      const { plans } = await listActivePlans(ctx, { limit: 100 });
      return {
        resources: [
          ACTIVE_PLANS_RESOURCE,
          ...plans.map(
            (plan): Resource => ({
              uri: planUri(plan.planId),
              name: plan.name,
              title: plan.name,
              description: `${plan.researchQuestion} (${plan.status}, ${plan.progress.percent}% done)`,
              mimeType: JSON_TYPE,
            }),
          ),
        ],
      };
    }),
  );

  server.server.setRequestHandler(
    "resources/read",
    withoutInternals(async (request, requestCtx): Promise<ReadResourceResult> => {
      const { uri } = request.params;
      const ctx = await contextOf(deps, requestCtx.http?.authInfo);
      if (isCardUri(uri)) return readCard(uri);
      if (uri === ACTIVE_PLANS_URI) {
        const active = await listActivePlans(ctx, { limit: 100 });
        return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(active, null, 2) }] };
      }
      const planId = PLAN_URI.exec(uri)?.[1];
      if (!planId) throw notFound(uri);
      try {
        const context = await readPlanContext(ctx, { planId: planId.toLowerCase() });
        return { contents: [{ uri, mimeType: JSON_TYPE, text: JSON.stringify(context, null, 2) }] };
      } catch (error) {
        // Another tenant's plan answers exactly like a missing one.
        if (isAppError(error) && error.code === "NOT_FOUND") throw notFound(uri);
        throw error;
      }
    }),
  );
}
