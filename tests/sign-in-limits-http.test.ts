/**
 * Sign-in limits through the production server, over HTTP, posting straight to
 * Auth.js's credentials callback (the path that skips the sign-in page): the
 * client address is the connection's (a forged X-Forwarded-For is ignored), or
 * X-Forwarded-For's when CAIRN_TRUST_PROXY says a proxy is in front, and a
 * refused attempt is answered without hashing a password. The scheme likewise:
 * a client's X-Forwarded-Proto neither turns on HSTS nor makes the OAuth issuer
 * https, a trusted proxy's does. Then a disabled user's API key at the MCP route.
 */
import { request as httpRequest } from "node:http";
import { and, eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { attemptLimits, users } from "@/lib/db/schema";
import { accountKey } from "@/lib/services/accounts/attempt-limits";
import { type AppServer, SEED_PASSWORD, startAppServer } from "./support/app-server";

type Answer = {
  status: number;
  location: string;
  setCookie: string[];
  body: string;
  ms: number;
  hsts: string | undefined;
};

/** One request on its own connection from `localAddress` (any 127.x.y.z reaches a loopback server). */
function send(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; from?: string },
): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      {
        method: options.method ?? "GET",
        headers: options.headers,
        localAddress: options.from ?? "127.0.0.1",
        agent: false,
      },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          body += chunk;
        });
        response.on("end", () =>
          resolve({
            status: response.statusCode ?? 0,
            location: String(response.headers.location ?? ""),
            setCookie: response.headers["set-cookie"] ?? [],
            body,
            ms: performance.now() - started,
            hsts: response.headers["strict-transport-security"],
          }),
        );
      },
    );
    request.on("error", reject);
    request.setTimeout(30_000, () => request.destroy(new Error("timed out")));
    request.end(options.body);
  });
}

/** A sign-in POSTed to Auth.js directly, with its CSRF token, as a script would. */
async function postSignIn(
  app: AppServer,
  email: string,
  password: string,
  extra: { from?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const csrf = await send(`${app.url}/api/auth/csrf`, { from: extra.from });
  const { csrfToken } = JSON.parse(csrf.body) as { csrfToken: string };
  const cookie = csrf.setCookie.map((c) => c.split(";")[0]).join("; ");
  return send(`${app.url}/api/auth/callback/credentials`, {
    method: "POST",
    from: extra.from,
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Cookie: cookie,
      ...extra.headers,
    },
    body: new URLSearchParams({ email, password, csrfToken, callbackUrl: "/plans" }).toString(),
  });
}

/** A page and the OAuth issuer, asked with `X-Forwarded-Proto: https` over plain http. */
async function claimingHttps(app: AppServer) {
  const headers = { "X-Forwarded-Proto": "https" };
  const page = await send(`${app.url}/sign-in`, { headers });
  expect(page.status).toBe(200);
  const metadata = await send(`${app.url}/.well-known/oauth-authorization-server`, { headers });
  const host = new URL(app.url).host;
  return {
    hsts: page.hsts,
    issuer: (JSON.parse(metadata.body) as { issuer: string }).issuer,
    host,
  };
}

async function addressKeys(handle: DatabaseHandle): Promise<string[]> {
  const rows = await handle.db
    .select({ key: attemptLimits.key })
    .from(attemptLimits)
    .where(eq(attemptLimits.kind, "sign_in_address"));
  return rows.map((row) => row.key).sort();
}

describe("sign-in limits over HTTP (PostgreSQL 15)", () => {
  let app: AppServer;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    app = await startAppServer("postgres");
    handle = await app.openDatabase();
  });
  afterAll(async () => {
    await handle?.close();
    await app?.stop();
  });

  it("signs in, and refuses the sixth try on an e-mail without hashing, saying so", async () => {
    const ok = await postSignIn(app, app.tenantA.researcherEmail, SEED_PASSWORD);
    expect(ok.status).toBe(302);
    expect(ok.location).toMatch(/\/plans$/);
    expect(ok.setCookie.some((c) => c.startsWith("authjs.session-token="))).toBe(true);

    const email = "mallory-target@example.com";
    const tries: Answer[] = [];
    for (let i = 0; i < 5; i++) {
      tries.push(await postSignIn(app, email, `guess ${i}`, { from: "127.0.0.2" }));
    }
    for (const answer of tries) {
      expect(answer.location).toContain("/sign-in?error=CredentialsSignin&code=credentials");
    }
    const refused = await postSignIn(app, email, "guess 6", { from: "127.0.0.2" });
    expect(refused.location).toContain("/sign-in?error=CredentialsSignin&code=too_many_attempts");
    // The refused attempt hashed nothing: far below one scrypt hash (about half a second).
    expect(refused.ms).toBeLessThan(Math.min(...tries.map((t) => t.ms)));

    const [row] = await handle.db
      .select()
      .from(attemptLimits)
      .where(
        and(
          eq(attemptLimits.kind, "sign_in_account"),
          eq(attemptLimits.key, accountKey(email).key),
        ),
      );
    expect(row?.blockedUntil?.getTime()).toBeGreaterThan(Date.now());

    // The sign-in page words the refusal for a browser sent there.
    const page = await fetch(refused.location);
    expect(await page.text()).toContain("Too many sign-in attempts");
  });

  it("counts the connection's address, not an X-Forwarded-For the client wrote", async () => {
    await postSignIn(app, "someone@example.com", "wrong", {
      from: "127.0.0.3",
      headers: { "X-Forwarded-For": "6.6.6.6" },
    });
    const keys = await addressKeys(handle);
    expect(keys).toContain("127.0.0.3");
    expect(keys).not.toContain("6.6.6.6");
    expect(keys).not.toContain("local");
  });

  it("takes no scheme from an X-Forwarded-Proto the client wrote: no HSTS, an http issuer", async () => {
    const { hsts, issuer, host } = await claimingHttps(app);
    expect(hsts).toBeUndefined();
    expect(issuer).toBe(`http://${host}`);
  });

  it("a disabled user's API key gets 401 at once, and works again when enabled", async () => {
    const ping = () =>
      fetch(app.mcpUrl, {
        method: "POST",
        headers: {
          Authorization: `Bearer ${app.tenantB.key}`,
          "Content-Type": "application/json",
          Accept: "application/json, text/event-stream",
        },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: {
            protocolVersion: "2025-06-18",
            capabilities: {},
            clientInfo: { name: "raw-http", version: "1" },
          },
        }),
      });
    expect((await ping()).status).toBe(200);
    await handle.db
      .update(users)
      .set({ disabledAt: new Date() })
      .where(eq(users.id, app.tenantB.userId));
    const refused = await ping();
    expect(refused.status).toBe(401);
    expect(refused.headers.get("www-authenticate")).toContain('error="invalid_token"');
    await handle.db.update(users).set({ disabledAt: null }).where(eq(users.id, app.tenantB.userId));
    expect((await ping()).status).toBe(200);
  });
});

describe("behind a trusted proxy (CAIRN_TRUST_PROXY=1)", () => {
  let app: AppServer;
  let handle: DatabaseHandle;

  beforeAll(async () => {
    app = await startAppServer("postgres", { env: { CAIRN_TRUST_PROXY: "1" } });
    handle = await app.openDatabase();
  });
  afterAll(async () => {
    await handle?.close();
    await app?.stop();
  });

  it("counts the address the proxy appended to X-Forwarded-For", async () => {
    await postSignIn(app, "someone@example.com", "wrong", {
      headers: { "X-Forwarded-For": "6.6.6.6, 198.51.100.23" },
    });
    expect(await addressKeys(handle)).toEqual(["198.51.100.23"]);
  });

  it("takes the scheme the trusted proxy names: HSTS and an https issuer", async () => {
    const { hsts, issuer, host } = await claimingHttps(app);
    expect(hsts).toBe("max-age=31536000");
    expect(issuer).toBe(`https://${host}`);
  });
});
