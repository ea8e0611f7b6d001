"use server";

import { AuthError } from "next-auth";
import { signIn, signOut } from "@/lib/auth/config";
import { type ActionState, field } from "@/lib/web/action-state";
import { refusalOf } from "@/lib/web/sign-in-refusal";

export async function signInAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const callbackUrl = field(form, "callbackUrl");
  try {
    await signIn("credentials", {
      email: field(form, "email") ?? "",
      password: field(form, "password") ?? "",
      // Only paths on this site, never an absolute URL from the query string.
      redirectTo:
        callbackUrl?.startsWith("/") && !callbackUrl.startsWith("//") ? callbackUrl : "/plans",
    });
  } catch (error) {
    if (error instanceof AuthError) return { status: "error", message: refusalOf(error) };
    // Success is a redirect, which Next.js signals by throwing.
    throw error;
  }
  return { status: "idle" };
}

export async function signOutAction() {
  await signOut({ redirectTo: "/sign-in" });
}
