/**
 * Models in JSON mode sometimes still wrap the object in a Markdown fence
 * (```json ... ```). This removes one around the trimmed answer exactly as the
 * regular expressions `^```(?:json)?\s*` (case-insensitive) and `\s*```$` did,
 * but by a linear scan: the second expression backtracks quadratically on a long
 * run of whitespace that no fence follows, and the answer is the model's to shape.
 */
export function stripCodeFence(answer: string): string {
  let text = answer.trim();
  if (text.startsWith("```")) {
    const tag = text.slice(3, 7);
    text = text.slice(/^json$/i.test(tag) ? 7 : 3).trimStart();
  }
  if (text.endsWith("```")) text = text.slice(0, -3).trimEnd();
  return text;
}
