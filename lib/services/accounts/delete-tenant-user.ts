/**
 * An admin deletes a teammate and their API keys. The audit trail stays whole:
 * its rows name their actor by a label kept in the row (actor_id has no foreign
 * key), reviews keep their decider's label, and plans the user created keep
 * existing (their creator becomes unknown: created_by_user_id and
 * created_by_key_id are set null).
 */
import "server-only";
import { eq } from "drizzle-orm";
import { users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { changeTenantUser } from "./change-tenant-user";

export async function deleteTenantUser(
  ctx: ServiceContext,
  input: { userId: string },
): Promise<{ email: string }> {
  return changeTenantUser(
    ctx,
    input.userId,
    { verb: "delete", removesAdmin: () => true },
    async (tx, target) => {
      await tx.delete(users).where(eq(users.id, input.userId));
      return target;
    },
  );
}
