/**
 * Fuzzing the OAuth endpoints and the web door's server actions with
 * fast-check, in process on PGlite and PostgreSQL 15 (the MCP tools have their
 * own fuzz test, tests/fuzz.test.ts). Inputs mix values that mean something
 * (registered clients and their redirect URIs, real codes and tokens, the ids
 * of rows that exist, another team's ids) with ones that do not (untrusted and
 * malformed URIs, wrong types, huge strings, NUL and odd Unicode).
 *
 * Every case must end in an answer, never a 5xx or an unexpected error:
 * - /register: 201 with metadata Cairn accepts, or 400/413/429 and no client stored;
 * - /authorize and the consent's answer: a refusal is a page; a redirect only
 *   ever goes to a redirect URI the client registered, with `iss`;
 * - /token: 200, or a standard error and no token stored; revocation: 200 or 400/413;
 * - client metadata documents (served here, whatever their content): a client
 *   with redirect URIs Cairn accepts, or a refusal; many distinct ones named
 *   from one address: no more fetched (or stored) than its limit allows, and
 *   no refusal that describes the network;
 * - server actions of the admin, plan and account pages (the session, Auth.js's
 *   sign-in and the caller's address mocked, all else real): a success, or an
 *   error message and nothing changed, never "Something went wrong" or a log line.
 *
 * The seed is printed; CAIRN_FUZZ_SEED=<seed> replays the same inputs and
 * CAIRN_OAUTH_FUZZ_RUNS changes the number of cases of each property.
 */
import { readdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resolve } from "node:path";
import { sql } from "drizzle-orm";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { setPeerAddressHeaderName } from "@/lib/auth/client-address";
import type { DatabaseHandle } from "@/lib/db/client";
import { checkClientMetadata } from "@/lib/oauth/clients";
import {
  AUTHORIZE_PARAMS,
  answerAuthorization,
  checkAuthorizationRequest,
  revocationEndpoint,
} from "@/lib/oauth/endpoints";
import { ATTEMPT_POLICIES } from "@/lib/services/accounts/attempt-limits";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import type { SignedInUser } from "@/lib/services/accounts/signed-in-user";
import type { ServiceContext } from "@/lib/services/shared/context";
import { type ActionState, IDLE } from "@/lib/web/action-state";
import { type FormAction, formFieldsOf } from "@/lib/web/server-action";
import { BACKENDS, freshDatabase } from "./support/databases";
import {
  connectApp,
  ORIGIN,
  pkce,
  postTokenInProcess,
  REDIRECT_URI,
  registerInProcess,
} from "./support/oauth-in-process";
import { readRows } from "./support/rows";

const SEED = Number(process.env.CAIRN_FUZZ_SEED ?? 20_261_125);
const RUNS = Number(process.env.CAIRN_OAUTH_FUZZ_RUNS ?? 150);

// Read by lib/env.ts on first use: the document server below is on 127.0.0.1,
// and webhooks may be registered to it (as an operator could allow).
process.env.CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS = "1";
process.env.CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES = "127.0.0.1";
setPeerAddressHeaderName("x-cairn-test-peer");

/** The signed-in person the mocked session answers with, and their context. */
const session = vi.hoisted(() => ({
  user: undefined as SignedInUser | undefined,
  ctx: undefined as ServiceContext | undefined,
}));
vi.mock("@/lib/auth/session", () => ({
  requireUser: async () => session.user,
  requireAdmin: async () => session.user,
  userContext: async () => session.ctx,
}));
vi.mock("next/cache", () => ({ revalidatePath: () => undefined }));
// The account page's actions: the password change signs the session in again
// through Auth.js, and counts attempts by the caller's address.
vi.mock("@/lib/auth/config", () => ({ signIn: async () => undefined }));
vi.mock("next-auth", () => ({ AuthError: class AuthError extends Error {} }));
vi.mock("@/lib/web/request", async (importOriginal) => ({
  ...(await importOriginal<typeof import("@/lib/web/request")>()),
  requestClientAddress: async () => "198.51.100.20",
}));
/** Next's redirect ends the action by throwing; so does this one, with the target. */
class Redirected extends Error {
  constructor(readonly location: string) {
    super(`redirected to ${location}`);
  }
}
vi.mock("next/navigation", () => ({
  redirect: (location: string) => {
    throw new Redirected(location);
  },
}));

const TRUSTED_REDIRECTS = [REDIRECT_URI, "https://app.example/cb", "com.example.app:/callback"];
const UNTRUSTED_REDIRECTS = [
  "https://evil.example/phish",
  "javascript:alert(1)",
  "data:text/html,<script>alert(1)</script>",
  "http://evil.example/cb",
  "https://app.example/cb#fragment",
  "//evil.example/cb",
  "https://app.example.evil.example/cb",
  `${REDIRECT_URI}/../../evil`,
];

/** Strings with the usual troublemakers. */
const oddString = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "grapheme", maxLength: 20 }),
  fc.constantFrom(
    "",
    " ",
    "\u0000",
    "\ud800",
    "null",
    "undefined",
    "__proto__",
    "'; drop table x;--",
  ),
  fc.constantFrom("x".repeat(3000), "%", "%%", "a=b&c=d", "\r\nX-Injected: 1"),
);

/**
 * Every server action of the signed-in pages (app/(app): `actions.ts` and
 * `*-actions.ts`), by export name: found, not listed, so a new one is fuzzed.
 */
async function signedInActions(): Promise<Record<string, FormAction>> {
  const files = (readdirSync("app/(app)", { recursive: true }) as string[])
    .filter((file) => /(^|[/-])actions\.ts$/.test(file))
    .map((file) => resolve("app/(app)", file));
  const actions: Record<string, FormAction> = {};
  for (const file of files) {
    for (const [name, value] of Object.entries(await import(file))) {
      const action = value as FormAction;
      // One style: every action of these pages is built by serverAction.
      expect(formFieldsOf(action), `${file}: ${name}`).toBeDefined();
      actions[name] = action;
    }
  }
  expect(Object.keys(actions)).toContain("decideReviewAction");
  return actions;
}

describe.each(BACKENDS)("fuzzing the OAuth endpoints and server actions (%s)", (backend) => {
  let handle: DatabaseHandle;
  let admin: SignedInUser;
  let adminCtx: ServiceContext;
  let researcherId: string;
  let otherTenantUserId: string;
  const clients: { clientId: string; redirectUris: string[] }[] = [];
  const tokens: string[] = [];
  let documents: Server;
  let documentsUrl: string;
  /** What the document server answers for each path the properties publish. */
  const published = new Map<string, { status: number; body: string }>();
  let documentCount = 0;
  /** How many requests the document server has answered. */
  let documentFetches = 0;

  const counts = async () =>
    (
      await readRows<Record<string, string>>(
        handle.db,
        sql`select
          (select count(*) from oauth_client)::text as clients,
          (select count(*) from oauth_token)::text as tokens,
          (select count(*) from app_user)::text as users,
          (select count(*) from app_user where disabled_at is null)::text as enabled,
          (select count(*) from app_user where role = 'admin')::text as admins,
          (select count(*) from api_key where revoked_at is null)::text as keys,
          (select count(*) from oauth_grant where revoked_at is null)::text as grants,
          (select count(*) from webhook_endpoint)::text as endpoints,
          (select count(*) from webhook_endpoint where disabled_at is null)::text as enabled_endpoints,
          (select count(*) from webhook_delivery where status = 'pending')::text as pending,
          (select count(*) from plan_audit_log)::text as plan_audit,
          (select count(*) from account_audit_log)::text as account_audit,
          (select count(*) from team_audit_log)::text as team_audit,
          (select count(*) from tenant where trusted_clients is not null)::text as trusting,
          (select coalesce(max(review_deadline_seconds), -1) from tenant)::text as deadline`,
      )
    )[0];

  beforeAll(async () => {
    console.log(`oauth fuzz seed ${SEED}: rerun with CAIRN_FUZZ_SEED=${SEED}`);
    handle = await freshDatabase(backend);
    const created = await createUser(handle.db, {
      email: "ada@example.com",
      password: "a long enough password",
      role: "admin",
      tenant: "Acme",
    });
    admin = { ...created, email: "ada@example.com", name: null, role: "admin" };
    adminCtx = {
      db: handle.db,
      tenantId: created.tenantId,
      actor: { type: "user", id: created.userId, label: "ada@example.com" },
      stallThresholdSeconds: 1800,
    };
    session.user = admin;
    session.ctx = adminCtx;
    researcherId = (
      await createUser(handle.db, {
        email: "bob@example.com",
        password: "a long enough password",
        role: "researcher",
        tenant: "Acme",
      })
    ).userId;
    otherTenantUserId = (
      await createUser(handle.db, {
        email: "eve@example.com",
        password: "a long enough password",
        role: "admin",
        tenant: "Other",
      })
    ).userId;
    await createApiKey(handle.db, { email: "bob@example.com", name: "script" });
    for (const redirectUris of [[REDIRECT_URI], TRUSTED_REDIRECTS]) {
      const registered = await registerInProcess(
        handle.db,
        { redirect_uris: redirectUris },
        "192.0.2.1",
      );
      clients.push({ clientId: String(registered.body.client_id), redirectUris });
    }
    const app = await connectApp(handle.db, created, clients[0]?.clientId);
    tokens.push(app.accessToken, app.refreshToken);

    documents = createServer((request, response) => {
      documentFetches += 1;
      const answer = published.get(request.url ?? "");
      response.writeHead(answer?.status ?? 404, { "Content-Type": "application/json" });
      response.end(answer?.body ?? "");
    });
    await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    documents?.closeAllConnections();
    await new Promise((resolve) => documents?.close(resolve));
    await handle?.close();
  });

  /** An otherwise valid authorization request naming a metadata document's URL as its client. */
  const authorizeDocumentClient = (clientId: string, redirectUri: string, address: string) =>
    checkAuthorizationRequest(
      handle.db,
      ORIGIN,
      {
        response_type: "code",
        client_id: clientId,
        redirect_uri: redirectUri,
        code_challenge: pkce().challenge,
        code_challenge_method: "S256",
      },
      { address },
    );

  const redirectUri = fc.oneof(
    fc.constantFrom(...TRUSTED_REDIRECTS, ...UNTRUSTED_REDIRECTS),
    fc.webUrl({ withQueryParameters: true, withFragments: true }),
    oddString,
  );

  it("/register: a client with metadata Cairn accepts, or a refusal and nothing stored", async () => {
    const metadata = fc.record(
      {
        redirect_uris: fc.oneof(fc.array(redirectUri, { maxLength: 12 }), oddString, fc.integer()),
        client_name: fc.oneof(oddString, fc.integer(), fc.constant(null)),
        token_endpoint_auth_method: fc.constantFrom("none", "client_secret_basic", "", 3),
        grant_types: fc.array(
          fc.constantFrom("authorization_code", "refresh_token", "implicit", "password"),
        ),
        response_types: fc.array(fc.constantFrom("code", "token", "id_token")),
        __proto__: fc.constant({ polluted: true }),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      metadata.map((value) => JSON.stringify(value)),
      fc.json(),
      oddString,
      fc.constant("x".repeat(20_000)),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.ipV4(), async (text, peer) => {
        const before = await counts();
        const answer = await registerInProcess(handle.db, text, peer);
        expect([201, 400, 413, 429]).toContain(answer.status);
        const after = await counts();
        if (answer.status === 201) {
          expect(() => checkClientMetadata(JSON.parse(text))).not.toThrow();
          expect(Number(after?.clients)).toBe(Number(before?.clients) + 1);
        } else {
          expect(answer.body.error).toEqual(expect.any(String));
          expect(after?.clients).toBe(before?.clients);
        }
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("/authorize and the consent: a page for a refusal, a redirect only to a registered URI, with iss", async () => {
    const clientId = fc.oneof(
      fc.constantFrom(...clients.map((client) => client.clientId)),
      fc.constantFrom(
        `${documentsUrl}/missing.json`,
        "https://10.0.0.1/client.json",
        "cairn_client_x",
      ),
      oddString,
    );
    const params = fc.record(
      Object.fromEntries(
        AUTHORIZE_PARAMS.map((name) => {
          const values: Record<string, fc.Arbitrary<string>> = {
            client_id: clientId,
            redirect_uri: redirectUri,
            response_type: fc.oneof(fc.constantFrom("code", "token", "code id_token"), oddString),
            code_challenge: fc.oneof(fc.constant(pkce().challenge), oddString),
            code_challenge_method: fc.oneof(fc.constantFrom("S256", "plain", "s256"), oddString),
            resource: fc.oneof(fc.constant(`${ORIGIN}/api/mcp`), redirectUri),
          };
          return [name, values[name] ?? oddString];
        }),
      ),
      { requiredKeys: ["client_id", "redirect_uri"] },
    );
    // Half the cases start from a request Cairn accepts, with one or two fields changed.
    const nearlyValid = fc
      .record({
        client_id: fc.constantFrom(...clients.map((client) => client.clientId)),
        redirect_uri: fc.constantFrom(...TRUSTED_REDIRECTS, ...UNTRUSTED_REDIRECTS),
        response_type: fc.constant("code"),
        code_challenge: fc.constant(pkce().challenge),
        code_challenge_method: fc.constant("S256"),
        state: oddString,
      })
      .chain((valid) =>
        fc
          .option(fc.tuple(fc.constantFrom(...AUTHORIZE_PARAMS), oddString), { nil: undefined })
          .map((change) => (change ? { ...valid, [change[0]]: change[1] } : valid)),
      );
    let consented = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(params, nearlyValid),
        fc.boolean(),
        fc.ipV4(),
        async (query, approved, address) => {
          const check = await checkAuthorizationRequest(handle.db, ORIGIN, query, { address });
          if (check.kind === "page_error") {
            expect(check.message).toEqual(expect.any(String));
            return;
          }
          expect(check.client.redirectUris).toContain(check.redirectUri);
          expect(TRUSTED_REDIRECTS).toContain(check.redirectUri);
          const location = await answerAuthorization(handle.db, ORIGIN, check, admin, approved);
          expect(location.startsWith(`${check.redirectUri}?`)).toBe(true);
          expect(new URL(location).searchParams.get("iss")).toBe(ORIGIN);
          consented += 1;
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
    // The property reached the consent's answer, not only refusals.
    expect(consented).toBeGreaterThan(0);
  });

  it("/token and revocation: an answer, never a 5xx, and no token stored on an error", async () => {
    const fields = fc.record(
      {
        grant_type: fc.oneof(
          fc.constantFrom("authorization_code", "refresh_token", "client_credentials", "password"),
          oddString,
        ),
        code: oddString,
        code_verifier: fc.oneof(fc.constant(pkce().verifier), oddString),
        redirect_uri: redirectUri,
        client_id: fc.oneof(
          fc.constantFrom(...clients.map((client) => client.clientId)),
          oddString,
        ),
        refresh_token: fc.oneof(fc.constantFrom(...tokens), oddString),
        resource: fc.oneof(fc.constant(`${ORIGIN}/api/mcp`), oddString),
        scope: oddString,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(fields, async (form) => {
        const before = await counts();
        const answer = await postTokenInProcess(handle.db, form);
        expect([200, 400, 401, 413]).toContain(answer.status);
        if (answer.status === 200) {
          expect(answer.body.access_token).toEqual(expect.any(String));
          if (typeof answer.body.refresh_token === "string") tokens.push(answer.body.refresh_token);
        } else {
          expect(answer.body.error).toEqual(expect.any(String));
          expect((await counts())?.tokens).toBe(before?.tokens);
        }
        const revoked = await revocationEndpoint(
          handle.db,
          new Request(`${ORIGIN}/api/oauth/revoke`, {
            method: "POST",
            headers: { "Content-Type": "application/x-www-form-urlencoded" },
            body: new URLSearchParams({ token: form.refresh_token ?? form.code ?? "" }),
          }),
        );
        expect([200, 400, 413]).toContain(revoked.status);
      }),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("client metadata documents: whatever they hold, a client Cairn accepts or a refusal", async () => {
    const document = fc.oneof(
      fc
        .record(
          {
            client_id: fc.oneof(fc.constant("OWN"), oddString),
            redirect_uris: fc.oneof(fc.array(redirectUri, { maxLength: 12 }), oddString),
            client_name: oddString,
            token_endpoint_auth_method: fc.constantFrom("none", "private_key_jwt"),
            grant_types: fc.array(fc.constantFrom("authorization_code", "implicit")),
          },
          { requiredKeys: [] },
        )
        .map((value) => ({ json: value })),
      fc.oneof(fc.json(), oddString).map((text) => ({ text })),
    );
    const status = fc.constantFrom(200, 200, 200, 301, 404, 500);
    await fc.assert(
      fc.asyncProperty(
        document,
        status,
        redirectUri,
        fc.ipV4(),
        async (content, answer, asked, address) => {
          documentCount += 1;
          const path = `/client-${documentCount}.json`;
          const url = `${documentsUrl}${path}`;
          const body =
            "json" in content
              ? JSON.stringify({
                  ...content.json,
                  client_id: content.json.client_id === "OWN" ? url : content.json.client_id,
                })
              : content.text;
          published.set(path, { status: answer, body });
          const check = await authorizeDocumentClient(url, asked, address);
          if (check.kind === "ok") {
            expect(() =>
              checkClientMetadata({ redirect_uris: check.client.redirectUris }),
            ).not.toThrow();
            expect(check.client.redirectUris).toContain(asked);
          }
        },
      ),
      { seed: SEED, numRuns: RUNS },
    );
  });

  it("/authorize naming many distinct client_id URLs from one address: fetches limited, refusals bounded", async () => {
    const address = "203.0.113.77";
    const { limit } = ATTEMPT_POLICIES.oauth_metadata_document_address;
    const before = await counts();
    const fetchesBefore = documentFetches;
    let limited = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(200, 404, 500),
        fc.constantFrom(REDIRECT_URI, "https://app.example/cb"),
        async (answer, asked) => {
          documentCount += 1;
          const path = `/many-${documentCount}.json`;
          const url = `${documentsUrl}${path}`;
          published.set(path, {
            status: answer,
            body: JSON.stringify({ client_id: url, redirect_uris: [REDIRECT_URI] }),
          });
          const check = await authorizeDocumentClient(url, asked, address);
          if (check.kind === "ok") return;
          // Nothing of the network: no address, no status, no resolver's words.
          expect(check.message).not.toMatch(/127\.0\.0\.1|HTTP \d|resolve|ENOTFOUND|ECONN/);
          if (/too many/.test(check.message)) {
            limited += 1;
            expect(check.message).toMatch(
              /^The client is refused: too many client metadata documents were fetched for this address\. Try again in \d+ minutes?\.$/,
            );
          }
        },
      ),
      { seed: SEED, numRuns: limit * 2 },
    );
    expect(limited).toBe(limit);
    expect(documentFetches - fetchesBefore).toBe(limit);
    // Documents fetched are stored (refusals included), those refused before a fetch are not.
    expect(Number((await counts())?.clients) - Number(before?.clients)).toBeLessThanOrEqual(limit);
  });

  it("server actions' form inputs: a success, or a message and nothing changed", async () => {
    const actions = await signedInActions();
    const ids = [
      researcherId,
      otherTenantUserId,
      admin.userId,
      "00000000-0000-4000-8000-000000000000",
    ];
    const value = fc.oneof(
      fc.constantFrom(...ids),
      fc
        .constantFrom(...ids)
        .chain((id) =>
          fc.constantFrom(
            `disable:${id}`,
            `enable:${id}`,
            `delete:${id}`,
            `make-admin:${id}`,
            `make-researcher:${id}`,
          ),
        ),
      fc.constantFrom(
        "new-person@example.com",
        "researcher",
        "admin",
        "on",
        "approve",
        "fail_step",
        "skip",
        "3600",
        "https://10.0.0.1/hook",
        "http://127.0.0.1:1/hook",
        "https://93.184.216.34/hook",
        "plan.completed",
        "a long enough password",
        "a new long password",
        "every",
        "only",
      ),
      oddString,
    );
    // Every action's own fields (so a field is fuzzed on the others' forms too), and a prototype's name.
    const names = fc.constantFrom(
      ...new Set(Object.values(actions).flatMap((action) => formFieldsOf(action) ?? [])),
      "__proto__",
    );
    const form = fc.array(fc.tuple(names, value), { maxLength: 8 });
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom(...Object.keys(actions)), form, async (name, entries) => {
          const data = new FormData();
          for (const [field, text] of entries) data.append(field, text);
          const before = await counts();
          let state: ActionState;
          try {
            const action = actions[name];
            if (!action) throw new Error(`no action ${name}`);
            state = await action(IDLE, data);
          } catch (error) {
            // The stalled page's recovery and the password change answer with a redirect to their own page.
            expect(error).toBeInstanceOf(Redirected);
            expect((error as Redirected).location).toMatch(/^\/(admin\/stalled|account)\?/);
            return;
          }
          expect(log).not.toHaveBeenCalled();
          if (state.status === "success") return;
          expect(state.status === "idle" ? "" : state.message).not.toMatch(/Something went wrong/);
          expect(await counts(), `${name} ${JSON.stringify(entries)}`).toEqual(before);
        }),
        { seed: SEED, numRuns: RUNS * 2 },
      );
    } finally {
      log.mockRestore();
    }
  });
});
