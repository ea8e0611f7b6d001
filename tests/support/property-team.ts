/**
 * A team for one sequence of the checkpoint property test
 * (tests/checkpoint-invariant.test.ts): its admin signed in to Cairn, an API
 * key, and two apps the admin connected by OAuth, one of which the team can
 * name as trusted. Each credential as the door builds its ServiceContext
 * (lib/mcp/request-context.ts for the key and the apps, `userContext` for the
 * person), so a sequence runs the tools' use cases as each party.
 */
import { randomUUID } from "node:crypto";
import type { Database } from "@/lib/db/client";
import { oauthClients, oauthGrants, tenants } from "@/lib/db/schema";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { insertUser } from "@/lib/services/accounts/insert-user";
import { hashPassword } from "@/lib/services/accounts/password";
import type { ServiceContext } from "@/lib/services/shared/context";

/** The two connected apps' client ids: the first is the one a team may trust by name. */
export const TRUSTED_CLIENT_ID = "property-trusted-app";
export const OTHER_CLIENT_ID = "property-other-app";

export type PropertyTeam = {
  tenantId: string;
  key: ServiceContext;
  person: ServiceContext & { actor: { id: string } };
  trustedApp: ServiceContext;
  otherApp: ServiceContext;
};

/** The OAuth clients, once per database (a client is not a team's; its grants are). */
async function oauthClientIds(db: Database): Promise<Record<string, string>> {
  const rows = await db
    .insert(oauthClients)
    .values(
      [TRUSTED_CLIENT_ID, OTHER_CLIENT_ID].map((clientId) => ({
        clientId,
        kind: "registered" as const,
        clientName: clientId,
        redirectUris: ["http://127.0.0.1/callback"],
      })),
    )
    .onConflictDoNothing()
    .returning({ id: oauthClients.id, clientId: oauthClients.clientId });
  const all =
    rows.length === 2
      ? rows
      : await db.select({ id: oauthClients.id, clientId: oauthClients.clientId }).from(oauthClients);
  return Object.fromEntries(all.map((row) => [row.clientId, row.id]));
}

/**
 * The password hash every team's admin shares: hashing is deliberately slow
 * (seconds on this machine), and a sequence never signs in.
 */
let sharedHash: Promise<string> | undefined;

export async function propertyTeam(db: Database, name: string): Promise<PropertyTeam> {
  const email = `${name.toLowerCase()}@example.com`;
  sharedHash ??= hashPassword("a long enough password");
  const passwordHash = await sharedHash;
  const user = await db.transaction(async (tx) => {
    const [tenant] = await tx.insert(tenants).values({ name }).returning({ id: tenants.id });
    if (!tenant) throw new Error(`team ${name} was not created`);
    const userId = await insertUser(tx, tenant.id, { email, role: "admin" }, passwordHash);
    return { tenantId: tenant.id, userId };
  });
  const key = await createApiKey(db, { email, name: `${name} agent` });
  const clients = await oauthClientIds(db);
  const base = { db, tenantId: user.tenantId, stallThresholdSeconds: 1800 };
  const app = async (clientId: string): Promise<ServiceContext> => {
    const [grant] = await db
      .insert(oauthGrants)
      .values({
        tenantId: user.tenantId,
        userId: user.userId,
        clientId: clients[clientId] ?? "",
        resource: "http://127.0.0.1/api/mcp",
        scope: "mcp",
      })
      .returning({ id: oauthGrants.id });
    return {
      ...base,
      actor: {
        type: "oauth_app",
        id: grant?.id ?? randomUUID(),
        label: `app ${JSON.stringify(clientId)} of ${email}`,
        credential: { userId: user.userId, clientId },
      },
    };
  };
  return {
    tenantId: user.tenantId,
    key: {
      ...base,
      actor: { type: "api_key", id: key.apiKeyId, label: `key "${name} agent" of ${email}` },
    },
    person: {
      ...base,
      actor: { type: "user", id: user.userId, label: `${name} Admin <${email}>` },
    },
    trustedApp: await app(TRUSTED_CLIENT_ID),
    otherApp: await app(OTHER_CLIENT_ID),
  };
}
