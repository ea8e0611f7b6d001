"use server";

import { z } from "zod";
import { AppError } from "@/lib/plan-engine/app-error";
import { MAX_ESCALATION_LEVELS } from "@/lib/plan-engine/review-deadlines";
import { setEscalationChain } from "@/lib/services/reviews/escalation-chain";
import { serverAction } from "@/lib/web/server-action";

/**
 * The form's fields, which are not the use case's: one row per level, each a
 * column of its own (minutes as typed, empty for an unused row; what the time
 * counts from; the admins or people; the people's e-mails, comma-separated).
 */
const row = z.array(z.string()).max(MAX_ESCALATION_LEVELS);
const escalationChainForm = z.object({
  afterMinutes: row,
  from: row,
  to: row,
  people: row,
});

type ChainForm = z.output<typeof escalationChainForm>;

/** The rows as the use case's levels: filled rows in order; none is no chain. */
function levelsOf(form: ChainForm) {
  const filled = form.afterMinutes.map((minutes) => minutes.trim() !== "");
  const used = filled.lastIndexOf(true) + 1;
  if (used === 0) return null;
  return form.afterMinutes.slice(0, used).map((raw, index) => {
    const minutes = raw.trim();
    if (!/^\d+$/.test(minutes)) {
      throw new AppError(
        "VALIDATION_ERROR",
        filled[index]
          ? `Level ${index + 1}: the time is a whole number of minutes.`
          : `Level ${index + 1} is empty while a later level is set: fill the levels in order.`,
        { field: `levels.${index}` },
      );
    }
    const people = (form.people[index] ?? "").split(/[,\s]+/).filter((email) => email !== "");
    return {
      afterSeconds: Number(minutes) * 60,
      from: form.from[index] === "request" ? ("request" as const) : ("previous" as const),
      to: form.to[index] === "people" ? { people } : ("admins" as const),
    };
  });
}

/** The team's escalation chain (docs/reviews.md, "Escalation chains"); every row empty removes it. */
export const setEscalationChainAction = serverAction({
  access: "admin",
  input: escalationChainForm,
  run: ({ ctx, input }) => setEscalationChain(ctx, { levels: levelsOf(input) }),
  success: (saved) =>
    saved === null
      ? "Saved: no escalation chain; a review stays with whom it was asked of until its deadline."
      : `Saved: reviews requested from now on escalate through ${saved.length} level${saved.length === 1 ? "" : "s"} while nobody answers.`,
  revalidate: () => "/admin",
});
