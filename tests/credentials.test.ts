/**
 * A person's credentials end when their access does, on PGlite and PostgreSQL
 * 15: a password change ends (by default) every session, connected app and API
 * key of theirs and says what ended; disabling a person revokes their connected
 * apps, so enabling them again brings no old token back; both are in the
 * account trail (lib/services/accounts/end-credentials.ts). An authorization
 * code approved before any of these, or before its app was revoked, is never
 * exchanged afterwards.
 */
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { DatabaseHandle } from "@/lib/db/client";
import { accountAuditLog, apiKeys, oauthAuthorizationCodes } from "@/lib/db/schema";
import { CREDENTIALS_CHANGED, CredentialCache } from "@/lib/mcp/credential-cache";
import { hashApiKey } from "@/lib/services/accounts/api-key";
import { authenticateApiKey } from "@/lib/services/accounts/api-key-auth";
import {
  changeOwnPassword,
  describePasswordChange,
} from "@/lib/services/accounts/change-own-password";
import { listConnectedApps, revokeConnectedApp } from "@/lib/services/accounts/connected-apps";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import { loadSessionUser } from "@/lib/services/accounts/load-session-user";
import { authenticateOAuthToken, hashToken } from "@/lib/services/accounts/oauth-token-auth";
import { revokeApiKey } from "@/lib/services/accounts/revoke-api-key";
import { setUserDisabled } from "@/lib/services/accounts/set-user-disabled";
import type { ServiceContext } from "@/lib/services/shared/context";
import { BACKENDS, freshDatabase } from "./support/databases";
import {
  approveApp,
  connectApp,
  exchangeCode,
  postTokenInProcess,
  RESOURCE,
} from "./support/oauth-in-process";

const PASSWORD = "a long enough password";

describe.each(BACKENDS)("credentials end with access (%s)", (backend) => {
  let handle: DatabaseHandle;
  let admin: { userId: string; tenantId: string };

  const as = (person: { userId: string; tenantId: string }, email: string): ServiceContext => ({
    db: handle.db,
    tenantId: person.tenantId,
    actor: { type: "user", id: person.userId, label: email },
    stallThresholdSeconds: 1800,
  });

  /** A new researcher of the team with an API key and a connected app. */
  async function personWithCredentials(email: string) {
    const person = await createUser(handle.db, {
      email,
      password: PASSWORD,
      role: "researcher",
      tenant: "Acme",
    });
    const key = await createApiKey(handle.db, { email, name: "script" });
    const app = await connectApp(handle.db, person);
    expect(await authenticateApiKey(handle.db, key.key)).toBeDefined();
    expect(await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE)).toBeDefined();
    return { person, key: key.key, app };
  }

  const trail = async (userId: string) =>
    handle.db
      .select({ eventType: accountAuditLog.eventType, payload: accountAuditLog.payload })
      .from(accountAuditLog)
      .where(eq(accountAuditLog.userId, userId));

  beforeAll(async () => {
    handle = await freshDatabase(backend);
    admin = await createUser(handle.db, {
      email: "ada@example.com",
      password: PASSWORD,
      role: "admin",
      tenant: "Acme",
    });
  });
  afterAll(async () => {
    await handle?.close();
  });

  it("a password change ends every session, connected app and API key, and says so", async () => {
    const { person, key, app } = await personWithCredentials("bob@example.com");
    const session = { ...person, sessionVersion: 0 };
    expect(await loadSessionUser(handle.db, session)).not.toBeNull();

    const changed = await changeOwnPassword(
      as(person, "bob@example.com"),
      { currentPassword: PASSWORD, newPassword: "a new long password", signOutEverywhere: "on" },
      { address: "10.0.0.2" },
    );
    expect(changed).toEqual({ everywhere: true, appsRevoked: 1, apiKeysRevoked: 1 });
    expect(describePasswordChange(changed)).toBe(
      "Password changed. Ended: your other sessions, 1 connected app and 1 API key.",
    );
    expect(await loadSessionUser(handle.db, session)).toBeNull();
    expect(await authenticateApiKey(handle.db, key)).toBeUndefined();
    expect(await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE)).toBeUndefined();
    const refresh = await postTokenInProcess(handle.db, {
      grant_type: "refresh_token",
      refresh_token: app.refreshToken,
      client_id: app.clientId,
    });
    expect(refresh.body.error).toBe("invalid_grant");
    expect(await trail(person.userId)).toEqual([
      {
        eventType: "password_changed",
        payload: { sessionsEnded: true, appsRevoked: 1, apiKeysRevoked: 1 },
      },
    ]);
  });

  it("a person may keep their apps and keys, and is told so", async () => {
    const { person, key, app } = await personWithCredentials("carol@example.com");
    const changed = await changeOwnPassword(
      as(person, "carol@example.com"),
      { currentPassword: PASSWORD, newPassword: "a new long password" },
      { address: "10.0.0.3" },
    );
    expect(changed).toEqual({ everywhere: false, appsRevoked: 0, apiKeysRevoked: 0 });
    expect(describePasswordChange(changed)).toMatch(/connected apps and API keys keep working/);
    expect(await authenticateApiKey(handle.db, key)).toBeDefined();
    expect(await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE)).toBeDefined();
    expect(await trail(person.userId)).toEqual([
      {
        eventType: "password_changed",
        payload: { sessionsEnded: true, appsRevoked: 0, apiKeysRevoked: 0 },
      },
    ]);
  });

  it("disabling revokes connected apps, so enabling brings no old token back", async () => {
    const { person, key, app } = await personWithCredentials("dan@example.com");
    const ctx = as(admin, "ada@example.com");
    await setUserDisabled(ctx, { userId: person.userId, disabled: true });
    expect(await authenticateApiKey(handle.db, key)).toBeUndefined();
    expect(await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE)).toBeUndefined();

    await setUserDisabled(ctx, { userId: person.userId, disabled: false });
    // The API key is the person's own, shown on Users & keys: it works again.
    expect(await authenticateApiKey(handle.db, key)).toBeDefined();
    expect(await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE)).toBeUndefined();
    const refresh = await postTokenInProcess(handle.db, {
      grant_type: "refresh_token",
      refresh_token: app.refreshToken,
      client_id: app.clientId,
    });
    expect(refresh.body.error).toBe("invalid_grant");
    expect(await trail(person.userId)).toEqual(
      expect.arrayContaining([
        {
          eventType: "user_disabled",
          payload: { sessionsEnded: true, appsRevoked: 1, apiKeysRevoked: 0 },
        },
        { eventType: "user_enabled", payload: {} },
      ]),
    );
  });

  it("the MCP door forgets a remembered credential as soon as the access it stands for ends", async () => {
    const { person, key, app } = await personWithCredentials("remy@example.com");
    const cache = new CredentialCache<string>();
    const events: string[] = [];
    handle.listen(CREDENTIALS_CHANGED, (event) => {
      events.push(event);
      cache.onEvent(event);
    });
    await vi.waitFor(() => expect(events).toContain("listening"));
    let lookups = 0;
    const check = (credential: string) =>
      cache.check(credential, async () => {
        lookups += 1;
        const found =
          credential === key
            ? await authenticateApiKey(handle.db, key)
            : await authenticateOAuthToken(handle.db, app.accessToken, RESOURCE);
        return found && { principal: found.userId };
      });
    // Checked once, then remembered.
    for (let i = 0; i < 3; i += 1) {
      expect(await check(key)).toBe(person.userId);
      expect(await check(app.accessToken)).toBe(person.userId);
    }
    expect(lookups).toBe(2);

    // Disabling the person ends both at once: this process, which made the
    // change, has forgotten them before the change's answer (no wait for the
    // notification), and the database tells every instance too.
    events.length = 0;
    await setUserDisabled(as(admin, "ada@example.com"), { userId: person.userId, disabled: true });
    // Heard before the write's answer: its notice on PostgreSQL; on PGlite, one
    // process's own database, the notification itself.
    expect(events).toContain(backend === "postgres" ? "changing" : "notified");
    expect(await check(key)).toBeUndefined();
    expect(await check(app.accessToken)).toBeUndefined();
    expect(lookups).toBe(4);
    await vi.waitFor(() => expect(events).toContain("notified"));

    // Enabled again, the key works, and is remembered again once this
    // process's own change is a moment past; revoked, it stops at once.
    await setUserDisabled(as(admin, "ada@example.com"), { userId: person.userId, disabled: false });
    expect(await check(key)).toBe(person.userId);
    await vi.waitFor(
      async () => {
        const before = lookups;
        expect(await check(key)).toBe(person.userId);
        expect(lookups).toBe(before);
      },
      { timeout: 3_000, interval: 100 },
    );
    const [row] = await handle.db
      .select({ id: apiKeys.id })
      .from(apiKeys)
      .where(eq(apiKeys.keyHash, hashApiKey(key)));
    await revokeApiKey(as(person, "remy@example.com"), { apiKeyId: row?.id ?? "" });
    expect(await check(key)).toBeUndefined();
  });

  it("a password change voids the codes approved before it, whichever box was ticked", async () => {
    for (const [email, everywhere] of [
      ["erin@example.com", true],
      ["fay@example.com", false],
    ] as const) {
      const { person } = await personWithCredentials(email);
      // Someone who knew the old password approved their own client, and kept the code.
      const pending = await approveApp(handle.db, person);
      await changeOwnPassword(
        as(person, email),
        {
          currentPassword: PASSWORD,
          newPassword: "a new long password",
          ...(everywhere ? { signOutEverywhere: "on" as const } : {}),
        },
        { address: "10.0.0.4" },
      );
      const exchanged = await exchangeCode(handle.db, pending);
      expect(exchanged.status, email).toBe(400);
      expect(exchanged.body.error, email).toBe("invalid_grant");
    }
  });

  it("a code is refused at the exchange when the access it came from ended after it was issued", async () => {
    const { person } = await personWithCredentials("gus@example.com");
    const pending = await approveApp(handle.db, person);
    // As if the code had been stored while the password change ran, after its deletion.
    const [code] = await handle.db
      .select()
      .from(oauthAuthorizationCodes)
      .where(eq(oauthAuthorizationCodes.codeHash, hashToken(pending.code)));
    await changeOwnPassword(
      as(person, "gus@example.com"),
      { currentPassword: PASSWORD, newPassword: "a new long password", signOutEverywhere: "on" },
      { address: "10.0.0.5" },
    );
    if (!code) throw new Error("no code stored");
    await handle.db.insert(oauthAuthorizationCodes).values(code);
    expect((await exchangeCode(handle.db, pending)).body.error).toBe("invalid_grant");
  });

  it("revoking an app voids its pending code; the person's other apps keep theirs", async () => {
    const { person } = await personWithCredentials("hal@example.com");
    const ctx = as(person, "hal@example.com");
    const apps = await listConnectedApps(ctx, { own: true });
    const connected = apps[0];
    if (!connected) throw new Error("no connected app");
    // The app asks again (a second device) and its code is not yet exchanged; another app too.
    const again = await approveApp(handle.db, person, connected.clientId);
    const other = await approveApp(handle.db, person);
    const [code] = await handle.db
      .select()
      .from(oauthAuthorizationCodes)
      .where(eq(oauthAuthorizationCodes.codeHash, hashToken(again.code)));
    await revokeConnectedApp(ctx, { grantId: connected.grantId }, { own: true });
    expect((await exchangeCode(handle.db, again)).body.error).toBe("invalid_grant");
    // Stored while the revocation ran: the exchange itself refuses it.
    if (!code) throw new Error("no code stored");
    await handle.db.insert(oauthAuthorizationCodes).values(code);
    expect((await exchangeCode(handle.db, again)).body.error).toBe("invalid_grant");
    expect((await exchangeCode(handle.db, other)).status).toBe(200);
  });

  it("disabling voids pending codes, so enabling again revives none", async () => {
    const { person } = await personWithCredentials("ida@example.com");
    const pending = await approveApp(handle.db, person);
    const ctx = as(admin, "ada@example.com");
    await setUserDisabled(ctx, { userId: person.userId, disabled: true });
    await setUserDisabled(ctx, { userId: person.userId, disabled: false });
    expect((await exchangeCode(handle.db, pending)).body.error).toBe("invalid_grant");
  });
});
