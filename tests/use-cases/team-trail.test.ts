/**
 * The team's trail (docs/reviews.md, "The team's trail"): each change to the
 * team's rules (who decides, the review deadline, the trusted apps), from the
 * admin page's use cases or the admin CLI, writes exactly one row naming who
 * changed what from what to what; a save that changes nothing writes none; a
 * trusted app must be one the team connected. In process, on PGlite and on
 * PostgreSQL 15.
 */
import { eq } from "drizzle-orm";
import { beforeAll, beforeEach, describe, expect, it } from "vitest";
import { teamAuditLog } from "@/lib/db/schema";
import { setDecisionPolicy, teamDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { getDecisionPolicy } from "@/lib/services/reviews/decision-rules";
import { getReviewDefaults, setReviewDefaults } from "@/lib/services/reviews/review-defaults";
import { getTrustedClients, setTrustedClients } from "@/lib/services/reviews/trusted-clients";
import type { ServiceContext } from "@/lib/services/shared/context";
import { teamRulesView } from "@/lib/services/views/team-rules";
import { BACKENDS } from "../support/databases";
import { signedInAdmin, tenantContext, useFreshTenant } from "../support/in-process";
import { connectApp, REDIRECT_URI, registerInProcess } from "../support/oauth-in-process";

describe.each(BACKENDS)("the team's trail on %s", (backend) => {
  const tenant = useFreshTenant(backend);
  const as = {} as { admin: ServiceContext; adminId: string };

  beforeAll(async () => {
    const admin = await signedInAdmin(tenant.handle.db, tenant.agent.ctx);
    as.admin = admin;
    as.adminId = admin.actor.id;
  });

  /** Every row of the team's trail, oldest first, as written. */
  async function trailRows() {
    return tenant.handle.db
      .select()
      .from(teamAuditLog)
      .where(eq(teamAuditLog.tenantId, as.admin.tenantId))
      .orderBy(teamAuditLog.createdAt);
  }

  let before = 0;
  beforeEach(async () => {
    before = (await trailRows()).length;
  });
  async function newRows() {
    return (await trailRows()).slice(before);
  }

  it("records a change of who decides, from and to, with the admin as actor; an unchanged save writes none", async () => {
    const start = await getDecisionPolicy(as.admin);
    const other = start === "people_only" ? "people_and_agents" : "people_only";
    await setDecisionPolicy(as.admin, { decisionPolicy: other });
    await setDecisionPolicy(as.admin, { decisionPolicy: other });
    const rows = await newRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      eventType: "decision_policy_changed",
      actorType: "user",
      actorId: as.adminId,
      actorLabel: "Alpha Admin <alpha@example.com>",
      payload: { from: start, to: other },
    });
    await setDecisionPolicy(as.admin, { decisionPolicy: start });
    expect(await newRows()).toHaveLength(2);
  });

  it("records the admin CLI's change as the CLI's, and its reading writes nothing", async () => {
    const start = await getDecisionPolicy(as.admin);
    const other = start === "people_only" ? "people_and_agents" : "people_only";
    expect(await teamDecisionPolicy(tenant.handle.db, "Alpha")).toBe(start);
    expect(await teamDecisionPolicy(tenant.handle.db, "Alpha", start)).toBe(start);
    expect(await newRows()).toHaveLength(0);
    expect(await teamDecisionPolicy(tenant.handle.db, "Alpha", other)).toBe(other);
    const rows = await newRows();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      eventType: "decision_policy_changed",
      actorType: "system",
      actorId: null,
      actorLabel: "the admin CLI",
      payload: { from: start, to: other },
    });
    await setDecisionPolicy(as.admin, { decisionPolicy: start });
  });

  it("records a change of the review deadline, from and to; an unchanged save writes none", async () => {
    expect(await getReviewDefaults(as.admin)).toEqual({ deadlineSeconds: null, onTimeout: null });
    await setReviewDefaults(as.admin, { deadlineSeconds: 1800, onTimeout: "escalate" });
    await setReviewDefaults(as.admin, { onTimeout: "escalate", deadlineSeconds: 1800 });
    await setReviewDefaults(as.admin, { deadlineSeconds: null, onTimeout: null });
    const rows = await newRows();
    expect(rows.map((row) => row.payload)).toEqual([
      {
        from: { deadlineSeconds: null, onTimeout: null },
        to: { deadlineSeconds: 1800, onTimeout: "escalate" },
      },
      {
        from: { deadlineSeconds: 1800, onTimeout: "escalate" },
        to: { deadlineSeconds: null, onTimeout: null },
      },
    ]);
    expect(rows.every((row) => row.eventType === "review_defaults_changed")).toBe(true);
    expect(rows.every((row) => row.actorId === as.adminId)).toBe(true);
  });

  it("a refused review deadline writes nothing", async () => {
    await expect(
      setReviewDefaults(as.admin, { deadlineSeconds: 60, onTimeout: null }),
    ).rejects.toThrow(/give both a deadline and what Cairn does when it passes/);
    expect(await newRows()).toHaveLength(0);
  });

  it("trusts only apps the team connected, records each change, and refuses an unknown client id", async () => {
    const registered = await registerInProcess(tenant.handle.db, {
      redirect_uris: [REDIRECT_URI],
      client_name: "Claude",
    });
    const claude = await connectApp(
      tenant.handle.db,
      { userId: as.adminId, tenantId: as.admin.tenantId },
      String(registered.body.client_id),
    );
    const beta = await tenantContext(tenant.handle.db, "Beta");
    const [betaAdmin] = await tenant.handle.db.query.users.findMany({
      where: (users, { eq }) => eq(users.email, "beta@example.com"),
    });
    const betaApp = await connectApp(tenant.handle.db, {
      userId: betaAdmin?.id ?? "",
      tenantId: beta.tenantId,
    });

    expect(await getTrustedClients(as.admin)).toBeNull();
    // No app named: it counts as its person where agents may relay, not where only people decide.
    expect(await teamRulesView(as.admin)).toMatchObject({
      decisionPolicy: "people_and_agents",
      teamClients: [{ clientId: claude.clientId, clientName: "Claude", countsAsPerson: true }],
    });
    await setDecisionPolicy(as.admin, { decisionPolicy: "people_only" });
    expect((await teamRulesView(as.admin)).teamClients).toEqual([
      { clientId: claude.clientId, clientName: "Claude", countsAsPerson: false },
    ]);

    for (const clientId of ["no-such-client", betaApp.clientId]) {
      await expect(
        setTrustedClients(as.admin, { clientIds: [claude.clientId, clientId] }),
      ).rejects.toMatchObject({
        code: "VALIDATION_ERROR",
        message: `clientIds: no one in this team has connected "${clientId}". List only apps from the team's connected apps (the admin page shows them).`,
      });
    }
    expect(await getTrustedClients(as.admin)).toBeNull();
    expect((await newRows()).map((row) => row.eventType)).toEqual(["decision_policy_changed"]);

    expect(
      await setTrustedClients(as.admin, { clientIds: [claude.clientId, claude.clientId] }),
    ).toEqual([claude.clientId]);
    await setTrustedClients(as.admin, { clientIds: [claude.clientId] });
    expect((await teamRulesView(as.admin)).teamClients).toEqual([
      { clientId: claude.clientId, clientName: "Claude", countsAsPerson: true },
    ]);
    await setDecisionPolicy(as.admin, { decisionPolicy: "people_and_agents" });
    await setTrustedClients(as.admin, { clientIds: [] });
    await setTrustedClients(as.admin, { clientIds: null });
    await setTrustedClients(as.admin, { clientIds: null });
    const rows = (await newRows()).filter((row) => row.eventType === "trusted_clients_changed");
    expect(rows.map((row) => [row.eventType, row.actorLabel, row.payload])).toEqual([
      [
        "trusted_clients_changed",
        "Alpha Admin <alpha@example.com>",
        { from: null, to: [claude.clientId] },
      ],
      [
        "trusted_clients_changed",
        "Alpha Admin <alpha@example.com>",
        { from: [claude.clientId], to: [] },
      ],
      ["trusted_clients_changed", "Alpha Admin <alpha@example.com>", { from: [], to: null }],
    ]);
    // Beta's trail is its own: none of Alpha's changes are in it.
    expect((await teamRulesView(beta)).trail).toEqual([]);
  });

  it("shows the admin page the team's changes newest first", async () => {
    await setReviewDefaults(as.admin, { deadlineSeconds: 600, onTimeout: "reject" });
    const { trail, trustedClients } = await teamRulesView(as.admin);
    expect(trustedClients).toBeNull();
    const [newest] = trail;
    expect(newest).toMatchObject({
      eventType: "review_defaults_changed",
      actorLabel: "Alpha Admin <alpha@example.com>",
      from: { deadlineSeconds: null, onTimeout: null },
      to: { deadlineSeconds: 600, onTimeout: "reject" },
    });
    expect(trail.length).toBe((await trailRows()).length);
  });
});
