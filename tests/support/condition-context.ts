/** A step's condition context the evaluator's tests read (lib/plan-engine/conditions*.test.ts). */
import type { ConditionContext } from "@/lib/plan-engine/conditions";

export const context: ConditionContext = {
  confidence: 0.85,
  status: "completed",
  score: 80,
  result: {
    hasData: true,
    empty: null,
    label: "80",
    metrics: { accuracy: 0.95, recall: 0.5 },
    items: [{ score: 3 }, { score: 7 }],
  },
};
