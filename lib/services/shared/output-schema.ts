/**
 * A step's `outputSchema` is its contract with what comes after it (conditions,
 * bindings of server-run steps): every way a step gets its result checks it,
 * a submit and the proposal a person's approve completes the step with alike.
 */
import "server-only";
import { AppError } from "../../plan-engine/app-error";
import { compileSchema, describeErrors } from "../research/extract-data";

/** Refuses a value that does not satisfy the step's outputSchema; nothing is stored. */
export function checkOutputSchema(
  schema: Record<string, unknown>,
  value: Record<string, unknown>,
  field: "result" | "proposedResult",
  next: string,
): void {
  const validate = compileSchema(schema);
  if (!validate(value)) {
    throw new AppError(
      "VALIDATION_ERROR",
      `${field} does not satisfy the step's outputSchema: ${describeErrors(validate)}. Nothing was stored; ${next}`,
      { field },
    );
  }
}
