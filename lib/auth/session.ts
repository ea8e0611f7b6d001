/**
 * The web door's identity: every page and server action starts here. A visitor
 * without a session is sent to sign in; a non-admin asking for an admin page
 * gets a 404, so the admin area does not announce itself.
 *
 * The session token only says who signed in; the user's row is read on every
 * request (one lookup by primary key, shared by a request's layout, page and
 * actions), so deleting or disabling a user, or changing their password, ends
 * their sessions at once, and a role change applies from their next request,
 * not when the 12-hour token expires.
 */
import "server-only";
import { headers } from "next/headers";
import { notFound, redirect } from "next/navigation";
import { cache } from "react";
import { getDb } from "../db/client";
import { env } from "../env";
import { ASKED_PATH_HEADER, signInPath } from "../http/return-path";
import { loadSessionUser } from "../services/accounts/load-session-user";
import type { SignedInUser } from "../services/accounts/signed-in-user";
import type { ServiceContext } from "../services/shared/context";
import { auth } from "./config";

export const currentUser = cache(async (): Promise<SignedInUser | null> => {
  const session = await auth();
  const claims = session?.user;
  if (!claims?.userId || !claims.tenantId) return null;
  return loadSessionUser(await getDb(), claims);
});

export async function requireUser(): Promise<SignedInUser> {
  const user = await currentUser();
  // Back to the page asked for after sign-in (a link to a review, say).
  if (!user) redirect(signInPath((await headers()).get(ASKED_PATH_HEADER)));
  return user;
}

/**
 * A route handler's answer to a visitor without a session (a download, a value's
 * "Show all"): a browser that opened the link is sent to sign in and back to it,
 * as a page's visitor is (requireUser); any other client gets 401 with `refusal`.
 */
export function signedOutAnswer(request: Request, refusal: string): Response {
  if (request.headers.get("accept")?.includes("text/html")) {
    const { pathname, search } = new URL(request.url);
    return new Response(null, {
      status: 303,
      headers: { Location: signInPath(`${pathname}${search}`) },
    });
  }
  return new Response(refusal, { status: 401 });
}

export async function requireAdmin(): Promise<SignedInUser> {
  const user = await requireUser();
  if (user.role !== "admin") notFound();
  return user;
}

/** The use cases' context for a person: their tenant, and them as the audit actor. */
export async function userContext(user: SignedInUser): Promise<ServiceContext> {
  return {
    db: await getDb(),
    tenantId: user.tenantId,
    actor: {
      type: "user",
      id: user.userId,
      label: user.name ? `${user.name} <${user.email}>` : user.email,
    },
    stallThresholdSeconds: env().CAIRN_STALL_THRESHOLD_SECONDS,
    stepLeaseSeconds: env().CAIRN_STEP_LEASE_SECONDS,
  };
}
