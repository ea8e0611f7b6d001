import type { ActionState } from "@/lib/web/action-state";

/** The answer of a server action, announced to screen readers. */
export function ActionMessage({ state }: { state: ActionState }) {
  if (state.status === "idle") return null;
  const role = state.status === "success" ? "status" : "alert";
  return (
    <p role={role} className={`notice notice-${state.status}`} data-testid="action-message">
      {state.message}
    </p>
  );
}
