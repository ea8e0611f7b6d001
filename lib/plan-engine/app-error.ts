/**
 * The one error type of Cairn's domain. Every expected failure carries a code an
 * AI platform or a person can act on; each door (MCP tool result, server action,
 * HTTP response) has one adapter that turns it into its own shape.
 *
 * It lives in the pure engine because the engine throws it (INVALID_TRANSITION)
 * and the engine may import nothing from other `lib/*` folders.
 */
export const ERROR_CODES = [
  "VALIDATION_ERROR",
  "NOT_FOUND",
  "INVALID_TRANSITION",
  "INVALID_STEP_REFERENCE",
  "INVALID_CONDITION",
  "PLAN_NOT_MODIFIABLE",
  "CONFLICT",
  "UNAUTHORIZED",
  "FORBIDDEN",
  "LLM_NOT_CONFIGURED",
  /** The language-model endpoint failed: unreachable, timed out, or answered with an error. */
  "LLM_UPSTREAM_ERROR",
  /** The model's answer did not match the caller's JSON Schema, even after one retry. */
  "EXTRACTION_FAILED",
  /** The database could not serve the call for now (a failover, a restart): retry in a few seconds. */
  "DATABASE_UNAVAILABLE",
  "INTERNAL_ERROR",
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly metadata: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, metadata: Record<string, unknown> = {}) {
    super(message);
    this.name = "AppError";
    this.code = code;
    this.metadata = metadata;
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

/** A read that answers NOT_FOUND as undefined (a page's 404), any other failure as it was. */
export async function undefinedIfNotFound<T>(read: Promise<T>): Promise<T | undefined> {
  try {
    return await read;
  } catch (error) {
    if (isAppError(error) && error.code === "NOT_FOUND") return undefined;
    throw error;
  }
}
