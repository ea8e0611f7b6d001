/** An admin changes a teammate's role; it takes effect on the user's next request (sessions read the role from the database). */
import "server-only";
import { eq } from "drizzle-orm";
import { type USER_ROLES, users } from "../../db/schema";
import type { ServiceContext } from "../shared/context";
import { changeTenantUser } from "./change-tenant-user";

export async function setUserRole(
  ctx: ServiceContext,
  input: { userId: string; role: (typeof USER_ROLES)[number] },
): Promise<{ email: string }> {
  return changeTenantUser(
    ctx,
    input.userId,
    { verb: "change the role of", removesAdmin: () => input.role !== "admin" },
    async (tx, target) => {
      await tx.update(users).set({ role: input.role }).where(eq(users.id, input.userId));
      return target;
    },
  );
}
