import type { DecisionChannel, DecisionPolicy } from "@/lib/plan-engine/states";

/** How a decision was made, wherever one is shown: a person, an agent relaying one, or Cairn. */
export function decisionChannelText(channel: DecisionChannel, decidedBy: string): string {
  if (channel === "web") return `by ${decidedBy} in Cairn`;
  if (channel === "client") return `by ${decidedBy} (a person, in their own MCP client)`;
  if (channel === "relayed") return `relayed by ${decidedBy} (an agent, not a person in Cairn)`;
  return "by Cairn at the deadline";
}

/** The team's rule on who decides, as the plan page and the inbox state it. */
export function DecisionPolicyNote({ policy }: { policy: DecisionPolicy }) {
  return (
    <p className="muted" data-testid="decision-policy">
      {policy === "people_only"
        ? "Only people decide this team's checkpoints: an agent cannot answer for you."
        : "People decide this team's checkpoints; agents may also relay a person's answer from their chat, and such decisions are marked as relayed."}
    </p>
  );
}
