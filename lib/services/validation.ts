import type { z } from "zod";
import { AppError } from "../plan-engine/app-error";

/** Parses a use case's input; a failure is a VALIDATION_ERROR naming every bad field. */
export function parseInput<T extends z.ZodType>(schema: T, raw: unknown): z.output<T> {
  const parsed = schema.safeParse(raw);
  if (parsed.success) return parsed.data;
  const problems = parsed.error.issues.map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join(".") : "input";
    return `${path}: ${issue.message}`;
  });
  throw new AppError("VALIDATION_ERROR", `${problems.join("; ")}.`, {
    issues: parsed.error.issues.map((issue) => ({ path: issue.path, message: issue.message })),
  });
}
