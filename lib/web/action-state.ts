/**
 * The web door's error adapter: server actions answer with a state the form
 * shows, never a thrown error. A CONFLICT (someone acted first) is its own
 * status so the review panel can say so plainly.
 */
import { z } from "zod";
import { logUnexpected } from "../log";
import { isAppError } from "../plan-engine/app-error";

/** A line of a success's list: what an action made or left, with a link to it where it has a page. */
export type ActionItem = { text: string; href?: string };

export type ActionState =
  | { status: "idle" }
  | { status: "success"; message: string; data?: Record<string, string>; items?: ActionItem[] }
  | { status: "conflict"; message: string }
  | { status: "error"; message: string };

export const IDLE: ActionState = { status: "idle" };

export function actionError(error: unknown): ActionState {
  if (isAppError(error)) {
    if (error.code === "CONFLICT") return { status: "conflict", message: error.message };
    if (error.code === "NOT_FOUND") {
      return { status: "error", message: "Not found: it does not exist in your account." };
    }
    return { status: "error", message: error.message };
  }
  logUnexpected("Unexpected error in a server action", error);
  return {
    status: "error",
    message: "Something went wrong and nothing was changed. Reload the page and try again.",
  };
}

export function field(form: FormData, name: string): string | undefined {
  const value = form.get(name);
  return typeof value === "string" ? value : undefined;
}

/**
 * The form's text fields by name. A browser sends an empty input as "": for a
 * field the schema may leave out that means "not given" (an empty optional name
 * is no name), while a required one keeps its "" so the schema's own message
 * ("is required", "must be an e-mail address") names it. A field the schema
 * takes as a list (checkboxes sharing a name) gets every value the form sent.
 * Every other field reaches the schema, which refuses one it does not know,
 * except Next.js's own and the `formOnly` fields the action reads itself.
 */
export function formInput(
  schema: z.ZodType,
  form: FormData,
  formOnly: readonly string[] = [],
): Record<string, string | string[]> {
  const shape = schema instanceof z.ZodObject ? (schema.shape as Record<string, z.ZodType>) : {};
  // Field names are the browser's to choose: `__proto__` or `constructor` must
  // neither find Object.prototype's members in the shape nor set a prototype.
  const input: Record<string, string | string[]> = Object.create(null);
  for (const [name, value] of form) {
    // Next.js's own fields of a server action's post ($ACTION_ID_…, $ACTION_REF_…, $ACTION_KEY):
    // the form's own unknown fields reach the schema and are refused there.
    if (typeof value !== "string" || name.startsWith("$ACTION_") || formOnly.includes(name)) {
      continue;
    }
    const field = Object.hasOwn(shape, name) ? shape[name] : undefined;
    if (field?.safeParse([]).success) {
      const list = input[name];
      input[name] = Array.isArray(list) ? [...list, value] : [value];
      continue;
    }
    if (value === "" && field?.safeParse(undefined).success) continue;
    input[name] = value;
  }
  return input;
}
