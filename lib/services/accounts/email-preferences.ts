/** A person's own switch for review e-mails (app_user.email_notifications; the account page). */
import { eq } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../../db/client";
import { users } from "../../db/schema";

export async function emailNotificationsOn(db: Database, userId: string): Promise<boolean> {
  const [user] = await db
    .select({ on: users.emailNotifications })
    .from(users)
    .where(eq(users.id, userId));
  return user?.on ?? false;
}

/** The account page's switch: the state the person asks for. */
export const emailNotificationsInput = z.object({ emails: z.enum(["on", "off"]) });

export async function setEmailNotifications(
  db: Database,
  userId: string,
  on: boolean,
): Promise<void> {
  await db.update(users).set({ emailNotifications: on }).where(eq(users.id, userId));
}
