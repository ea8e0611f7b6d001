/**
 * The OAuth server's second hardening round (docs/oauth.md), in process on
 * PGlite and PostgreSQL 15: /authorize is never an open redirect, every
 * authorization response names its issuer (RFC 9207), a forged Host names no
 * other issuer, registrations answer a readable 429, unused self-registered
 * clients are deleted, and a client metadata document that fails to fetch is
 * not fetched again on every request, its refusal names nothing of the
 * network, and no more than a thousand such refusals are kept. The same flows over HTTP against the
 * production build are in tests/oauth.test.ts.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { eq, isNull, like } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { setPeerAddressHeaderName } from "@/lib/auth/client-address";
import type { DatabaseHandle } from "@/lib/db/client";
import { oauthAuthorizationCodes, oauthClients } from "@/lib/db/schema";
import { deleteStaleClients } from "@/lib/oauth/clients";
import { authorizationServerMetadata, publicOrigin } from "@/lib/oauth/config";
import { answerAuthorization, checkAuthorizationRequest } from "@/lib/oauth/endpoints";
import { createUser } from "@/lib/services/accounts/create-user";
import { BACKENDS, freshDatabase } from "./support/databases";
import {
  CALLER,
  pkce as challenge,
  connectApp,
  ORIGIN,
  REDIRECT_URI,
  registerInProcess,
} from "./support/oauth-in-process";

// Read by lib/env.ts on first use: the test's document server is on 127.0.0.1.
process.env.CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS = "1";
// Where the server would put the connection's address: each test's registrations count apart.
setPeerAddressHeaderName("x-cairn-test-peer");

const EVIL = "https://evil.example/phish";

const register = (db: DatabaseHandle["db"], metadata: unknown, peer = "203.0.113.9") =>
  registerInProcess(db, metadata, peer);

describe.each(BACKENDS)("OAuth hardening (%s)", (backend) => {
  let handle: DatabaseHandle;
  let user: { userId: string; tenantId: string };
  let documents: Server;
  let documentsUrl: string;
  let documentFetches = 0;

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    user = await createUser(handle.db, {
      email: "ada@example.com",
      password: "a long enough password",
      role: "admin",
      tenant: "Alpha",
    });
    documents = createServer((_request, response) => {
      documentFetches += 1;
      response.writeHead(500);
      response.end();
    });
    await new Promise<void>((resolve) => documents.listen(0, "127.0.0.1", resolve));
    documentsUrl = `http://127.0.0.1:${(documents.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    documents?.closeAllConnections();
    await new Promise((resolve) => documents?.close(resolve));
    await handle?.close();
  });

  it("never redirects a refused authorization request, even to a registered redirect URI", async () => {
    const client = await register(handle.db, { redirect_uris: [EVIL] });
    expect(client.status).toBe(201);
    const base = {
      client_id: String(client.body.client_id),
      redirect_uri: EVIL,
      state: "s",
    };
    for (const params of [
      { ...base, response_type: "x" },
      { ...base, response_type: "code" },
      { ...base, response_type: "code", code_challenge: "a".repeat(43) },
      {
        ...base,
        response_type: "code",
        code_challenge: challenge().challenge,
        code_challenge_method: "S256",
        resource: "https://other.example/mcp",
      },
    ]) {
      const check = await checkAuthorizationRequest(handle.db, ORIGIN, params, CALLER);
      expect(check.kind, JSON.stringify(params)).toBe("page_error");
      expect(JSON.stringify(check)).not.toContain("evil.example");
    }
  });

  it("names the issuer in every authorization response and in its metadata (RFC 9207)", async () => {
    expect(authorizationServerMetadata(ORIGIN)).toMatchObject({
      issuer: ORIGIN,
      authorization_response_iss_parameter_supported: true,
    });
    const client = await register(handle.db, { redirect_uris: [REDIRECT_URI] });
    const pkce = challenge();
    const check = await checkAuthorizationRequest(
      handle.db,
      ORIGIN,
      {
        response_type: "code",
        client_id: String(client.body.client_id),
        redirect_uri: REDIRECT_URI,
        code_challenge: pkce.challenge,
        code_challenge_method: "S256",
        state: "s1",
      },
      CALLER,
    );
    if (check.kind !== "ok") throw new Error(`refused: ${JSON.stringify(check)}`);
    for (const approved of [true, false]) {
      const location = new URL(await answerAuthorization(handle.db, ORIGIN, check, user, approved));
      expect(location.searchParams.get("iss")).toBe(ORIGIN);
      expect(location.searchParams.get("state")).toBe("s1");
      expect(location.searchParams.has(approved ? "code" : "error")).toBe(true);
    }
  });

  it("takes no issuer from a Host that only starts like a loopback one", () => {
    expect(publicOrigin(new Headers({ host: "localhost:1@evil.example" }))).toBeUndefined();
    expect(publicOrigin(new Headers({ host: "127.0.0.1:3000" }))).toBe(ORIGIN);
  });

  it("deletes self-registered clients nobody connected with, and keeps those in use", async () => {
    const unused = String(
      (await register(handle.db, { redirect_uris: [REDIRECT_URI] })).body.client_id,
    );
    const used = (await connectApp(handle.db, user)).clientId;
    // Consented, its code not yet exchanged: about to become a connected app.
    const pending = String(
      (await register(handle.db, { redirect_uris: [REDIRECT_URI] })).body.client_id,
    );
    const pendingCheck = await checkAuthorizationRequest(
      handle.db,
      ORIGIN,
      {
        response_type: "code",
        client_id: pending,
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge().challenge,
        code_challenge_method: "S256",
      },
      CALLER,
    );
    if (pendingCheck.kind !== "ok") throw new Error("refused");
    await answerAuthorization(handle.db, ORIGIN, pendingCheck, user, true);
    // Young clients stay: a platform registers, then sends the person to consent.
    await deleteStaleClients(handle.db, new Date());
    const clientIds = async () =>
      (await handle.db.select({ clientId: oauthClients.clientId }).from(oauthClients)).map(
        (row) => row.clientId,
      );
    expect(await clientIds()).toEqual(expect.arrayContaining([unused, used]));
    const dayLater = new Date(Date.now() + 25 * 3600 * 1000);
    // The code's expiry moved past that day, as if it had just been issued then.
    await handle.db
      .update(oauthAuthorizationCodes)
      .set({ expiresAt: new Date(dayLater.getTime() + 60_000) })
      .where(isNull(oauthAuthorizationCodes.usedAt));
    const deleted = await deleteStaleClients(handle.db, dayLater);
    expect(deleted).toBeGreaterThan(0);
    const left = await clientIds();
    expect(left).not.toContain(unused);
    expect(left).toContain(used);
    expect(left).toContain(pending);
  });

  it("does not fetch a failing client metadata document again on every request", async () => {
    const clientId = `${documentsUrl}/failing.json`;
    const params = {
      response_type: "code",
      client_id: clientId,
      redirect_uri: REDIRECT_URI,
      code_challenge: challenge().challenge,
      code_challenge_method: "S256",
    };
    const before = documentFetches;
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const check = await checkAuthorizationRequest(handle.db, ORIGIN, params, CALLER);
      // What the server answered stays in the log: the page says only that it was not reached.
      expect(check).toEqual({
        kind: "page_error",
        message:
          "The client is refused: the address of its metadata document is not allowed or could not be reached.",
      });
    }
    expect(documentFetches - before).toBe(1);
    // The failure is remembered for a while, then the document is tried again.
    await handle.db
      .update(oauthClients)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(oauthClients.clientId, clientId));
    await checkAuthorizationRequest(handle.db, ORIGIN, params, CALLER);
    expect(documentFetches - before).toBe(2);
  });

  it("remembers no more than a thousand refused documents at once", async () => {
    const expiresAt = new Date(Date.now() + 60_000);
    await handle.db.insert(oauthClients).values(
      Array.from({ length: 1000 }, (_, n) => ({
        clientId: `https://refused.example/${n}.json`,
        kind: "metadata_document" as const,
        redirectUris: [],
        fetchError: "the address of its metadata document is not allowed or could not be reached",
        fetchedAt: new Date(),
        expiresAt,
      })),
    );
    const clientId = `${documentsUrl}/one-too-many.json`;
    const check = await checkAuthorizationRequest(
      handle.db,
      ORIGIN,
      {
        response_type: "code",
        client_id: clientId,
        redirect_uri: REDIRECT_URI,
        code_challenge: challenge().challenge,
        code_challenge_method: "S256",
      },
      { address: "198.51.100.99" },
    );
    expect(check.kind).toBe("page_error");
    const stored = await handle.db
      .select({ id: oauthClients.id })
      .from(oauthClients)
      .where(eq(oauthClients.clientId, clientId));
    expect(stored).toEqual([]);
    await handle.db
      .delete(oauthClients)
      .where(like(oauthClients.clientId, "https://refused.example/%"));
  });
  // Last: it uses up an address's registrations.
  it("answers too many registrations with one readable sentence", async () => {
    let answer = await register(handle.db, { redirect_uris: [EVIL] }, "198.51.100.7");
    for (let count = 1; answer.status === 201 && count < 40; count += 1) {
      answer = await register(handle.db, { redirect_uris: [EVIL] }, "198.51.100.7");
    }
    expect(answer.status).toBe(429);
    expect(answer.body.error_description).toMatch(
      /^Too many client registrations from this address\. Try again in \d+ minutes?\.$/,
    );
  });
});
