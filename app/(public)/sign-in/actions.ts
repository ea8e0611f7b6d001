"use server";

import { AuthError } from "next-auth";
import { signIn, signOut } from "@/lib/auth/config";
import { returnFragment, returnPath } from "@/lib/http/return-path";
import { type ActionState, field } from "@/lib/web/action-state";
import { refusalOf } from "@/lib/web/sign-in-refusal";

export async function signInAction(_state: ActionState, form: FormData): Promise<ActionState> {
  const back = returnPath(field(form, "callbackUrl"));
  try {
    await signIn("credentials", {
      email: field(form, "email") ?? "",
      password: field(form, "password") ?? "",
      // Only paths on this site, never another origin from the query string;
      // the anchor (`#review`) the browser kept, which no request carries.
      redirectTo: back ? `${back}${returnFragment(field(form, "callbackHash"))}` : "/plans",
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
