import type { ActionState } from "@/lib/web/action-state";

/** The answer of a server action, announced to screen readers, and the list of what it made. */
export function ActionMessage({ state }: { state: ActionState }) {
  if (state.status === "idle") return null;
  const role = state.status === "success" ? "status" : "alert";
  const items = state.status === "success" ? (state.items ?? []) : [];
  return (
    <>
      <p role={role} className={`notice notice-${state.status}`} data-testid="action-message">
        {state.message}
      </p>
      {items.length > 0 ? (
        <ul className="plain" data-testid="action-items">
          {items.map((item, index) => (
            // Lines may repeat (two plans of one name); their place is their identity.
            // biome-ignore lint/suspicious/noArrayIndexKey: the list is fixed once answered
            <li key={index} data-testid="action-item">
              {/* A plain link: the MCP App cards render this component outside Next, where next/link cannot run. */}
              {item.href ? <a href={item.href}>{item.text}</a> : item.text}
            </li>
          ))}
        </ul>
      ) : null}
    </>
  );
}
