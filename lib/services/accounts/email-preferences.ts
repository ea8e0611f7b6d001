/** A person's own switch for review e-mails (app_user.email_notifications; the account page). */
import "server-only";
import { eq } from "drizzle-orm";
import { z } from "zod";
import { users } from "../../db/schema";
import { actingUserId, type ServiceContext } from "../shared/context";
import { parseInput } from "../shared/validation";

/** Whether the acting user gets review e-mails. */
export async function emailNotificationsOn(ctx: ServiceContext): Promise<boolean> {
  const [user] = await ctx.db
    .select({ on: users.emailNotifications })
    .from(users)
    .where(eq(users.id, actingUserId(ctx)));
  return user?.on ?? false;
}

/** The account page's switch: its hidden field says what pressing it asks for, "on" or "off" (absent: off). */
export const emailNotificationsInput = z.object({ emails: z.enum(["on", "off"]).optional() });

/** Turns the acting user's review e-mails on or off. */
export async function setEmailNotifications(
  ctx: ServiceContext,
  raw: z.input<typeof emailNotificationsInput>,
): Promise<void> {
  const input = parseInput(emailNotificationsInput, raw);
  await ctx.db
    .update(users)
    .set({ emailNotifications: input.emails === "on" })
    .where(eq(users.id, actingUserId(ctx)));
}
