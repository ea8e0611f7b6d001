/**
 * An admin disables or enables a teammate. Disabling ends the user's sessions
 * and stops their API keys at once (both are checked against the user on every
 * request), refuses their sign-in, and revokes their connected apps (grants and
 * tokens); enabling lets them sign in again and their keys work again, while
 * old sessions and connected apps stay ended (the person connects apps anew).
 * Both are recorded in the account trail.
 */
import "server-only";
import { eq, sql } from "drizzle-orm";
import { users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { changeTenantUser } from "./change-tenant-user";
import { endCredentials, writeAccountAudit } from "./end-credentials";

export async function setUserDisabled(
  ctx: ServiceContext,
  input: { userId: string; disabled: boolean },
): Promise<{ email: string }> {
  return changeTenantUser(
    ctx,
    input.userId,
    { verb: input.disabled ? "disable" : "enable", removesAdmin: () => input.disabled },
    async (tx, target) => {
      await tx
        .update(users)
        .set(
          input.disabled
            ? { disabledAt: new Date(), sessionVersion: sql`${users.sessionVersion} + 1` }
            : { disabledAt: null },
        )
        .where(eq(users.id, input.userId));
      const person = { userId: input.userId, email: target.email };
      if (input.disabled) {
        const ended = await endCredentials(tx, ctx, person, { apps: true, apiKeys: false });
        await writeAccountAudit(tx, ctx, person, "user_disabled", {
          sessionsEnded: true,
          ...ended,
        });
      } else {
        await writeAccountAudit(tx, ctx, person, "user_enabled", {});
      }
      return target;
    },
  );
}
