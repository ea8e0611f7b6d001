/**
 * A team for one sequence of the checkpoint property test
 * (tests/checkpoint-invariant.test.ts): its admin and a colleague signed in to Cairn, an API
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
  /** A second person of the team (a researcher signed in to Cairn), for reviews that need two approvals. */
  colleague: ServiceContext & { actor: { id: string } };
  trustedApp: ServiceContext;
  otherApp: ServiceContext;
};

/** The OAuth clients' row ids, created once per database (a client is not a team's; its grants are). */
const clientRows = new WeakMap<Database, Promise<Record<string, string>>>();

function oauthClientIds(db: Database): Promise<Record<string, string>> {
  let ids = clientRows.get(db);
  if (!ids) {
    ids = db
      .insert(oauthClients)
      .values(
        [TRUSTED_CLIENT_ID, OTHER_CLIENT_ID].map((clientId) => ({
          clientId,
          kind: "registered" as const,
          clientName: clientId,
          redirectUris: ["http://127.0.0.1/callback"],
        })),
      )
      .returning({ id: oauthClients.id, clientId: oauthClients.clientId })
      .then((rows) => Object.fromEntries(rows.map((row) => [row.clientId, row.id])));
    clientRows.set(db, ids);
  }
  return ids;
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
    const colleagueId = await insertUser(
      tx,
      tenant.id,
      { email: `colleague.${email}`, role: "researcher" },
      passwordHash,
    );
    return { tenantId: tenant.id, userId, colleagueId };
  });
  const key = await createApiKey(db, { email, name: `${name} agent` });
  const clients = await oauthClientIds(db);
  const base = { db, tenantId: user.tenantId, stallThresholdSeconds: 1800 };
  const grants = await db
    .insert(oauthGrants)
    .values(
      [TRUSTED_CLIENT_ID, OTHER_CLIENT_ID].map((clientId) => ({
        tenantId: user.tenantId,
        userId: user.userId,
        clientId: clients[clientId] ?? "",
        resource: "http://127.0.0.1/api/mcp",
        scope: "mcp",
      })),
    )
    .returning({ id: oauthGrants.id });
  const app = (clientId: string, grantId: string | undefined): ServiceContext => ({
    ...base,
    actor: {
      type: "oauth_app",
      id: grantId ?? randomUUID(),
      label: `app ${JSON.stringify(clientId)} of ${email}`,
      credential: { userId: user.userId, clientId },
    },
  });
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
    colleague: {
      ...base,
      actor: { type: "user", id: user.colleagueId, label: `Colleague <colleague.${email}>` },
    },
    trustedApp: app(TRUSTED_CLIENT_ID, grants[0]?.id),
    otherApp: app(OTHER_CLIENT_ID, grants[1]?.id),
  };
}
