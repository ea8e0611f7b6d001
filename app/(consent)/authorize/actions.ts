"use server";

import { headers } from "next/headers";
import { redirect } from "next/navigation";
import { currentUser } from "@/lib/auth/session";
import { getDb } from "@/lib/db/client";
import { publicOrigin } from "@/lib/oauth/config";
import {
  AUTHORIZE_PARAMS,
  answerAuthorization,
  authorizeParamsOf,
  checkAuthorizationRequest,
} from "@/lib/oauth/endpoints";
import type { ActionState } from "@/lib/web/action-state";
import { requestClientAddress } from "@/lib/web/request";

/**
 * Approve or deny. The request is checked again (the form's fields are the
 * browser's to change), the person must still be signed in, and the answer
 * is a redirect to the client: with a one-time code, or access_denied.
 */
export async function answerConsentAction(
  _state: ActionState,
  form: FormData,
): Promise<ActionState> {
  const user = await currentUser();
  if (!user) return { status: "error", message: "Your session ended: sign in again." };
  const origin = publicOrigin(await headers());
  if (!origin) return { status: "error", message: "This address is not one of Cairn's." };
  const query = new URLSearchParams();
  for (const name of AUTHORIZE_PARAMS) {
    const value = form.get(name);
    if (typeof value === "string") query.set(name, value);
  }
  const db = await getDb();
  const check = await checkAuthorizationRequest(db, origin, authorizeParamsOf(query), {
    address: await requestClientAddress(),
  });
  if (check.kind === "page_error") return { status: "error", message: check.message };
  const decision = form.get("decision");
  if (decision !== "approve" && decision !== "deny") {
    return { status: "error", message: "Choose Approve or Deny." };
  }
  redirect(await answerAuthorization(db, origin, check, user, decision === "approve"));
}
