/**
 * An admin disables or enables a teammate. Disabling ends the user's sessions
 * and stops their API keys at once (both are checked against the user on every
 * request) and refuses their sign-in; enabling lets them sign in again (old
 * sessions stay ended) and their keys work again.
 */
import "server-only";
import { eq, sql } from "drizzle-orm";
import { users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { changeTenantUser } from "./change-tenant-user";

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
      return target;
    },
  );
}
