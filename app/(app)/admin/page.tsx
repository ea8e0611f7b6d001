import type { Metadata } from "next";
import Link from "next/link";
import { requireAdmin } from "@/lib/auth/session";
import { MAX_ESCALATION_LEVELS } from "@/lib/plan-engine/review-deadlines";
import { TOOL_CALL_WINDOW_HOURS } from "@/lib/services/views/admin-overview";
import { views } from "@/lib/web/views";
import { DecisionPolicyForm } from "./decision-policy-form";
import { EscalationChainForm } from "./escalation-chain-form";
import { ReviewDefaultsForm } from "./review-defaults-form";
import { ReviewQuorumForm } from "./review-quorum-form";
import { TeamTrail } from "./team-trail";
import { TrustedClientsForm } from "./trusted-clients-form";

export const metadata: Metadata = { title: "Admin" };

function plural(n: number, one: string, many = `${one}s`) {
  return `${n} ${n === 1 ? one : many}`;
}

/** The admin area's front page: every admin page, each with a count where one is cheap. */
export default async function AdminPage() {
  const admin = await requireAdmin();
  const overview = await views.adminOverview(admin);
  const defaults = await views.reviewDefaults(admin);
  const approvalsRequired = await views.reviewQuorum(admin);
  const escalationChain = await views.escalationChain(admin);
  const decisionPolicy = await views.decisionPolicy(admin);
  const rules = await views.teamRules(admin);
  const pages = [
    {
      id: "stalled",
      href: "/admin/stalled",
      title: "Stalled plans",
      count: overview.stalledPlans,
      detail: `${plural(overview.stalledPlans, "plan")} stalled or holding a failed step; ${plural(overview.pausedPlans, "plan")} paused on a server-run step`,
    },
    {
      id: "tool-calls",
      href: "/admin/tool-calls",
      title: "Tool calls",
      count: overview.toolCalls.calls,
      detail: `${plural(overview.toolCalls.calls, "call")} in the last ${TOOL_CALL_WINDOW_HOURS} h, ${plural(overview.toolCalls.errors, "error")}`,
    },
    {
      id: "skills",
      href: "/admin/skills",
      title: "Skill runs",
      count: overview.skillRuns,
      detail: `${plural(overview.skillRuns, "research run")} recorded`,
    },
    {
      id: "users",
      href: "/admin/users",
      title: "Users and API keys",
      count: overview.users,
      detail: `${plural(overview.users, "user")}, ${plural(overview.activeApiKeys, "active API key")}`,
    },
  ];
  return (
    <section>
      <h1>Admin</h1>
      <p className="muted">Your tenant's operations at a glance.</p>
      <ul className="cards" data-testid="admin-overview">
        {pages.map((page) => (
          <li key={page.id} className="card" data-testid={`admin-overview-${page.id}`}>
            <header className="step-header">
              <h2>
                <Link href={page.href}>{page.title}</Link>
              </h2>
              <span
                className={page.id === "stalled" && page.count > 0 ? "count count-active" : "count"}
                data-testid="admin-overview-count"
              >
                {page.count}
              </span>
            </header>
            <p className="muted">{page.detail}</p>
          </li>
        ))}
      </ul>
      <section className="card" aria-labelledby="decision-policy-heading">
        <h2 id="decision-policy-heading">Who decides checkpoints</h2>
        <p className="muted">
          Enforced for every review, over MCP and in the browser; the plan page and each
          request_user_review answer say which applies.
        </p>
        <DecisionPolicyForm policy={decisionPolicy} />
      </section>
      <section className="card" aria-labelledby="review-defaults-heading">
        <h2 id="review-defaults-heading">Review deadline</h2>
        <p className="muted">
          The team's default for reviews whose agent sets no deadline: when it passes, Cairn acts
          itself and the audit trail records it as "Cairn (deadline)".
        </p>
        <ReviewDefaultsForm
          deadlineSeconds={defaults.deadlineSeconds}
          onTimeout={defaults.onTimeout}
        />
      </section>
      <section className="card" aria-labelledby="escalation-chain-heading">
        <h2 id="escalation-chain-heading">Escalation chain</h2>
        <p className="muted">
          While nobody answers a review, Cairn hands it on, level by level: after the minutes given
          (counted from the request or from the level before), to the admins or to the people named
          (active members of the team), who are notified. The review's deadline still applies its
          action when it comes, and ends the chain. 1 to {MAX_ESCALATION_LEVELS} levels of 1 minute
          to 30 days; leave every row empty for no chain. Applies to reviews requested after the
          change.
        </p>
        <EscalationChainForm levels={escalationChain} />
      </section>
      <section className="card" aria-labelledby="review-quorum-heading">
        <h2 id="review-quorum-heading">Approvals</h2>
        <p className="muted">
          How many different people must approve a review before it passes. Each person's approval
          counts once and only for the content they saw; one person's reject, modify or skip decides
          at once. A plan or an agent may ask for more, never fewer. Applies to reviews requested
          after the change.
        </p>
        <ReviewQuorumForm approvalsRequired={approvalsRequired} />
      </section>
      <section className="card" aria-labelledby="trusted-clients-heading">
        <h2 id="trusted-clients-heading">Trusted apps</h2>
        <p className="muted">
          A person deciding a review in their own chat app (a connected app signed in as them)
          counts as that person only when the app is trusted here; the trail marks such decisions as
          made in the client. Where only people decide, no app counts until it is named below: any
          program a person connects, an agent's command line included, could otherwise decide as
          them. API keys never count as a person.
        </p>
        <p className="muted" data-testid="card-hosts">
          Cairn's review card (an MCP App) is rendered by hosts such as Claude, ChatGPT, VS Code,
          Goose, Postman, MCPJam and Cursor; name the app of the host your team decides in.
        </p>
        <TrustedClientsForm
          decisionPolicy={rules.decisionPolicy}
          trustedClients={rules.trustedClients}
          teamClients={rules.teamClients}
        />
      </section>
      <section className="card" aria-labelledby="team-trail-heading">
        <h2 id="team-trail-heading">Changes to the team's rules</h2>
        <p className="muted">
          Who changed who decides, the review deadline or the trusted apps, when, and from what to
          what.
        </p>
        <TeamTrail trail={rules.trail} clients={rules.teamClients} />
      </section>
    </section>
  );
}
