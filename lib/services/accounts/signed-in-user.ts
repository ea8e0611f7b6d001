/** Who a session belongs to: what sign-in returns, the session token carries and every request reloads. */
import "server-only";
import type { USER_ROLES } from "../../db/schema";

export type SignedInUser = {
  userId: string;
  tenantId: string;
  email: string;
  name: string | null;
  role: (typeof USER_ROLES)[number];
};

/** A signed-in user as the session token carries it: the version ends the token when it changes. */
export type SessionClaims = SignedInUser & { sessionVersion: number };
