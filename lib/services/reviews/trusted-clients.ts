/**
 * Which connected apps' decisions in the client (a review card, an in-client
 * form) count as a person's (docs/reviews.md): only the listed OAuth clients,
 * by their `client_id`; with no list (null), every app a person of the team
 * authorized in Cairn's browser flow where agents may relay, and none where
 * only people decide (the engine's `answersAsPersonInClient`). Set by an
 * admin; a change is written to the team's trail (team-trail.ts).
 */
import "server-only";
import { and, asc, eq, inArray } from "drizzle-orm";
import { z } from "zod";
import type { Executor } from "../../db/client";
import { oauthClients, oauthGrants, tenants } from "../../db/schema";
import { AppError } from "../../plan-engine/app-error";
import type { ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";
import { changeTeamRule } from "./team-trail";

/** A client_id is a generated id or a metadata document's URL; the cap bounds what the trail copies. */
const MAX_CLIENT_ID_LENGTH = 2048;
const MAX_TRUSTED_CLIENTS = 100;

export const trustedClientsInput = z.strictObject({
  clientIds: z
    .array(z.string().trim().min(1).max(MAX_CLIENT_ID_LENGTH))
    .max(MAX_TRUSTED_CLIENTS)
    .nullable()
    .describe(
      "null: none named (every connected app where agents may relay, none where only people decide); a list: only these clients' decisions count as their person's.",
    ),
});

export async function getTrustedClients(ctx: ServiceContext): Promise<string[] | null> {
  const [row] = await ctx.db
    .select({ trustedClients: tenants.trustedClients })
    .from(tenants)
    .where(eq(tenants.id, ctx.tenantId));
  return row?.trustedClients ?? null;
}

/**
 * Sets the list (null: none named). A client id not already listed
 * must be one a person of this team has connected (an OAuth grant of the team),
 * so a typo or another team's app is refused rather than trusted in advance.
 * One already listed may stay after its grants are gone, as a re-save of the
 * form must not fail on it. The list is kept sorted and without repeats.
 */
export async function setTrustedClients(
  ctx: ServiceContext,
  raw: z.input<typeof trustedClientsInput>,
): Promise<string[] | null> {
  const { clientIds } = parseInput(trustedClientsInput, raw);
  const to = clientIds === null ? null : [...new Set(clientIds)].sort();
  const change = await changeTeamRule(ctx.db, {
    tenantId: ctx.tenantId,
    actor: ctx.actor,
    eventType: "trusted_clients_changed",
    to,
    check: async (tx, from) => {
      const added = (to ?? []).filter((clientId) => !from?.includes(clientId));
      if (added.length === 0) return;
      const known = new Set(
        (await listTeamClients(tx, ctx.tenantId, added)).map((client) => client.clientId),
      );
      const unknown = added.filter((clientId) => !known.has(clientId));
      if (unknown.length > 0) {
        throw new AppError(
          "VALIDATION_ERROR",
          `clientIds: no one in this team has connected ${unknown.map((id) => `"${id}"`).join(", ")}. List only apps from the team's connected apps (the admin page shows them).`,
          { field: "clientIds" },
        );
      }
    },
  });
  return change.to;
}

export type TeamClient = { clientId: string; clientName: string | null };

/**
 * The OAuth clients people of the team have connected (revoked ones too), by
 * name; with `clientIds`, only those of them. The admin page's list and the
 * check of a new trusted client.
 */
export function listTeamClients(
  db: Executor,
  tenantId: string,
  clientIds?: string[],
): Promise<TeamClient[]> {
  return db
    .selectDistinct({ clientId: oauthClients.clientId, clientName: oauthClients.clientName })
    .from(oauthGrants)
    .innerJoin(oauthClients, eq(oauthClients.id, oauthGrants.clientId))
    .where(
      and(
        eq(oauthGrants.tenantId, tenantId),
        clientIds === undefined ? undefined : inArray(oauthClients.clientId, clientIds),
      ),
    )
    .orderBy(asc(oauthClients.clientName), asc(oauthClients.clientId));
}
