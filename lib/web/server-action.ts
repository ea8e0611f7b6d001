/**
 * The one wrapper of the web door's server actions: sign-in and role, the form
 * parsed with the use case's schema, the context, errors as form state,
 * revalidation (docs/architecture.md, "One review button").
 */
import "server-only";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { requireAdmin, requireUser, userContext } from "../auth/session";
import type { SignedInUser } from "../services/accounts/signed-in-user";
import { notificationsQueued } from "../services/notifications/queued";
import { kickIfQueuedSince } from "../services/notifications/runtime";
import type { ServiceContext } from "../services/shared/context";
import { parseInput } from "../services/shared/validation";
import { type ActionState, actionError, formInput } from "./action-state";

export type ActionCall<Input> = { ctx: ServiceContext; user: SignedInUser; input: Input };

export type ServerActionSpec<Schema extends z.ZodType, Result> = {
  /** `signed-in`: any user of the tenant, researcher or admin; `admin`: admins only. */
  access: "signed-in" | "admin";
  /** The use case's input schema; the form's fields are parsed with it. */
  input: Schema;
  /**
   * A check of the form itself that no use case makes (a confirmation field that
   * must match), before the schema; a message refuses the form.
   */
  refuse?: (form: FormData) => string | undefined;
  /**
   * Fields the form sends that are not the use case's (a confirmation `refuse`
   * reads, a submit button's name, a password manager's hint): left out before
   * the schema, which refuses any other field it does not know.
   */
  formOnly?: readonly string[];
  run(call: ActionCall<z.output<Schema>>): Promise<Result>;
  /** The form's message once the use case succeeded, or a whole state (with data); may redirect. */
  success(
    result: Result,
    input: z.output<Schema>,
    user: SignedInUser,
  ): string | ActionState | Promise<string | ActionState>;
  /** The path (or paths) whose pages show what the action changes. */
  revalidate?: (input: z.output<Schema>) => string | string[];
  /** Revalidate after a failed use case too: it may have failed because someone else acted first. */
  revalidateAfterFailure?: boolean;
};

function revalidate<Schema extends z.ZodType>(
  spec: Pick<ServerActionSpec<Schema, unknown>, "revalidate">,
  input: z.output<Schema>,
): void {
  const paths = spec.revalidate?.(input) ?? [];
  for (const path of typeof paths === "string" ? [paths] : paths) revalidatePath(path);
}

export type FormAction = (state: ActionState, form: FormData) => Promise<ActionState>;

/** Each action's form fields (its schema's and `formOnly`), for `formFieldsOf`. */
const FORM_FIELDS = new WeakMap<FormAction, readonly string[]>();

/**
 * The fields a server action's form may send: read by the fuzz test, so a new
 * action or field is fuzzed without a list to edit.
 */
export function formFieldsOf(action: FormAction): readonly string[] | undefined {
  return FORM_FIELDS.get(action);
}

export function serverAction<Schema extends z.ZodType, Result>(
  spec: ServerActionSpec<Schema, Result>,
): FormAction {
  const action: FormAction = async (_state, form) => {
    const user = spec.access === "admin" ? await requireAdmin() : await requireUser();
    const refused = spec.refuse?.(form);
    if (refused) return { status: "error", message: refused };
    let input: z.output<Schema>;
    let result: Result;
    try {
      input = parseInput(spec.input, formInput(spec.input, form, spec.formOnly));
    } catch (error) {
      return actionError(error);
    }
    const queuedBefore = notificationsQueued();
    try {
      result = await spec.run({ ctx: await userContext(user), user, input });
    } catch (error) {
      if (spec.revalidateAfterFailure) revalidate(spec, input);
      return actionError(error);
    }
    // A decision that ended a plan queued plan.completed: send it now, not on the timer.
    kickIfQueuedSince(queuedBefore);
    revalidate(spec, input);
    const done = await spec.success(result, input, user);
    return typeof done === "string" ? { status: "success", message: done } : done;
  };
  const shape = spec.input instanceof z.ZodObject ? Object.keys(spec.input.shape) : [];
  FORM_FIELDS.set(action, [...shape, ...(spec.formOnly ?? [])]);
  return action;
}
