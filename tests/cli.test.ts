import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { and, eq, gt } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase } from "@/lib/db/client";
import {
  apiKeys,
  planAuditLog,
  researchPlans,
  setupCodes,
  teamAuditLog,
  tenants,
  users,
} from "@/lib/db/schema";
import { hashApiKey } from "@/lib/services/accounts/api-key";
import { verifyPassword } from "@/lib/services/accounts/password";
import { hashSetupCode } from "@/lib/services/accounts/setup-codes";
import { auditKeyring } from "@/lib/services/audit/audit-key";
import { createPostgresDatabase } from "./support/databases";
import { inProcessAgent, planSteps, tenantContext } from "./support/in-process";
import { holdEmbeddedDatabase, runCli } from "./support/run-cli";

const root = mkdtempSync(join(tmpdir(), "cairn-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the admin CLI on the embedded database", () => {
  const dataDir = join(root, "pglite");
  const env = { CAIRN_DATA_DIR: dataDir };

  it("creates a user and its tenant, then a key printed alone on the last line", async () => {
    // The password comes on standard input, as `echo "$PW" | ... --password-stdin` sends it.
    const user = runCli(
      [
        "create-user",
        "--email",
        "Ada@Example.com",
        "--password-stdin",
        "--role",
        "admin",
        "--tenant",
        "Acme",
      ],
      env,
      "correct horse\n",
    );
    expect(user.stderr).toBe("");
    expect(user.status).toBe(0);
    expect(user.stdout).toContain('new tenant "Acme"');
    expect(user.stdout).not.toContain("correct horse");

    // Or in the environment.
    const second = runCli(
      ["create-user", "--email", "bob@example.com", "--role", "researcher", "--tenant", "Acme"],
      { ...env, CAIRN_PASSWORD: "battery staple" },
    );
    expect(second.stderr).toBe("");
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('existing tenant "Acme"');

    const key = runCli(
      ["create-api-key", "--email", "ada@example.com", "--name", "Claude Code"],
      env,
    );
    expect(key.status).toBe(0);
    const lines = key.stdout.trim().split("\n");
    const printed = lines.at(-1) ?? "";
    expect(printed).toMatch(/^cairn_[A-Za-z0-9_-]{43}$/);

    const handle = await openDatabase({ kind: "pglite", dataDir });
    try {
      const [stored] = await handle.db.select().from(apiKeys);
      expect(stored?.name).toBe("Claude Code");
      expect(stored?.keyHash).toBe(hashApiKey(printed));
      expect(JSON.stringify(stored)).not.toContain(printed);
      const people = await handle.db.select().from(users).orderBy(users.email);
      expect(people.map((u) => [u.email, u.role])).toEqual([
        ["ada@example.com", "admin"],
        ["bob@example.com", "researcher"],
      ]);
      expect(await verifyPassword("correct horse", people[0]?.passwordHash ?? "")).toBe(true);
      expect(await verifyPassword("wrong", people[0]?.passwordHash ?? "")).toBe(false);
      expect(await verifyPassword("battery staple", people[1]?.passwordHash ?? "")).toBe(true);
      expect(await handle.db.select().from(tenants).where(eq(tenants.name, "Acme"))).toHaveLength(
        1,
      );
    } finally {
      await handle.close();
    }
  });

  it("still takes --password, warning that other users can see it", async () => {
    const result = runCli(
      [
        "create-user",
        "--email",
        "carol@example.com",
        "--password",
        "visible in ps",
        "--role",
        "researcher",
        "--tenant",
        "Acme",
      ],
      env,
    );
    expect(result.status).toBe(0);
    expect(result.stderr).toContain(
      "Warning: --password puts the password on the command line, where other users of this machine can read it",
    );
    expect(result.stderr).toContain("Use --password-stdin or CAIRN_PASSWORD instead.");
    expect(result.stderr).not.toContain("visible in ps");

    const handle = await openDatabase({ kind: "pglite", dataDir });
    try {
      const [carol] = await handle.db
        .select()
        .from(users)
        .where(eq(users.email, "carol@example.com"));
      expect(await verifyPassword("visible in ps", carol?.passwordHash ?? "")).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it("keeps a password read from standard input whole but for one trailing newline", async () => {
    const result = runCli(
      [
        "create-user",
        "--email",
        "dan@example.com",
        "--password-stdin",
        "--role",
        "researcher",
        "--tenant",
        "Acme",
      ],
      env,
      "  spaces and tabs\t \r\n",
    );
    expect(result.stderr).toBe("");
    expect(result.status).toBe(0);
    const handle = await openDatabase({ kind: "pglite", dataDir });
    try {
      const [dan] = await handle.db.select().from(users).where(eq(users.email, "dan@example.com"));
      expect(await verifyPassword("  spaces and tabs\t ", dan?.passwordHash ?? "")).toBe(true);
    } finally {
      await handle.close();
    }
  });

  it("wants the password exactly one way", () => {
    const args = ["create-user", "--email", "eve@example.com", "--role", "admin", "--tenant", "X"];
    const both = runCli(
      [...args, "--password-stdin"],
      { ...env, CAIRN_PASSWORD: "long enough" },
      "x",
    );
    expect(both.status).toBe(2);
    expect(both.stderr).toContain(
      "Give the password one way, not with --password-stdin and CAIRN_PASSWORD.",
    );

    const none = runCli(args, env);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain(
      "A password is required: pipe it to --password-stdin, or set CAIRN_PASSWORD.",
    );
  });

  it("answers bad input with a clear error and a non-zero exit, writing nothing", () => {
    const bad = runCli(
      ["create-user", "--email", "not-an-email", "--role", "boss", "--tenant", "X"],
      { ...env, CAIRN_PASSWORD: "short" },
    );
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("VALIDATION_ERROR");
    expect(bad.stderr).toContain("email: must be an e-mail address");
    expect(bad.stderr).toContain("password: must be at least 8 characters");

    const duplicate = runCli(
      [
        "create-user",
        "--email",
        "ada@example.com",
        "--password-stdin",
        "--role",
        "admin",
        "--tenant",
        "Other",
      ],
      env,
      "whatever1",
    );
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr).toContain("CONFLICT");
    expect(duplicate.stderr).toContain(
      "ada@example.com already belongs to an account in another team.",
    );

    const unknown = runCli(["create-api-key", "--email", "nobody@example.com"], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("NOT_FOUND");

    const missing = runCli(["create-user", "--email", "x@example.com"], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("A password is required");

    const typo = runCli(["create-usr"], env);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('Unknown command "create-usr"');
  });

  it("a second process on a folder in use fails fast, naming the folder", async () => {
    const holder = await holdEmbeddedDatabase(dataDir);
    try {
      // The holder never lets go, so an answer at all shows the CLI did not wait.
      const blocked = runCli(["create-api-key", "--email", "ada@example.com"], env);
      expect(blocked.status).toBe(1);
      expect(blocked.stderr).toContain(
        `The embedded database folder ${dataDir} is in use by process`,
      );
      expect(blocked.stderr).toContain("CAIRN_DATA_DIR");
    } finally {
      await holder.release();
    }
    expect(existsSync(join(dataDir, "cairn.lock"))).toBe(false);
    expect(runCli(["create-api-key", "--email", "ada@example.com"], env).status).toBe(0);
  });

  it("takes over a lock left by a process that died", () => {
    writeFileSync(
      join(dataDir, "cairn.lock"),
      JSON.stringify({ pid: 2 ** 22 + 17, hostname: hostname(), startedAt: "then" }),
    );
    expect(runCli(["create-api-key", "--email", "ada@example.com"], env).status).toBe(0);
    expect(existsSync(join(dataDir, "cairn.lock"))).toBe(false);
  });
});

describe("the admin CLI's setup-code", () => {
  const dataDir = join(root, "setup-code");
  const env = { CAIRN_DATA_DIR: dataDir };

  it("prints a new one-time code on a fresh install, stores only its hash, and refuses once set up", async () => {
    const first = runCli(["setup-code"], env);
    expect(first.stderr).toBe("");
    expect(first.status).toBe(0);
    const code = first.stdout.trim().split("\n").at(-1) ?? "";
    expect(code).toMatch(/^[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}-[0-9A-Z]{4}$/);
    const second = runCli(["setup-code"], env).stdout.trim().split("\n").at(-1);
    expect(second).not.toBe(code);

    const handle = await openDatabase({ kind: "pglite", dataDir });
    try {
      const stored = await handle.db.select().from(setupCodes);
      expect(stored.map((row) => row.codeHash).sort()).toEqual(
        [hashSetupCode(code), hashSetupCode(second ?? "")].sort(),
      );
      expect(JSON.stringify(stored)).not.toContain(code);
    } finally {
      await handle.close();
    }

    expect(
      runCli(["create-user", "--email", "a@example.com", "--role", "admin", "--tenant", "T"], {
        ...env,
        CAIRN_PASSWORD: "long enough",
      }).status,
    ).toBe(0);
    const after = runCli(["setup-code"], env);
    expect(after.status).toBe(1);
    expect(after.stderr).toContain("CONFLICT: Cairn is already set up");
  });
});

describe("the admin CLI on PostgreSQL 15", () => {
  let url: string;
  beforeAll(async () => {
    url = await createPostgresDatabase();
  });

  it("migrates a server database, then creates a user and a key", () => {
    const migrate = runCli(["migrate"], { DATABASE_URL: url });
    expect(migrate.stderr).toBe("");
    expect(migrate.stdout).toContain("Migrations applied (postgres)");
    expect(
      runCli(
        [
          "create-user",
          "--email",
          "pg@example.com",
          "--password-stdin",
          "--role",
          "researcher",
          "--tenant",
          "PG",
        ],
        { DATABASE_URL: url },
        "long enough\n",
      ).status,
    ).toBe(0);
    const key = runCli(["create-api-key", "--email", "pg@example.com"], { DATABASE_URL: url });
    expect(key.status).toBe(0);
    expect(key.stdout.trim().split("\n").at(-1)).toMatch(/^cairn_/);
  });
});

describe("the admin CLI's checks of checkpoints and trails", () => {
  const dataDir = join(root, "pglite-audit");
  const env = { CAIRN_DATA_DIR: dataDir };

  it("sets the team's quorum, and refuses a number out of range", async () => {
    const handle = await openDatabase({ kind: "pglite", dataDir: join(root, "pglite-quorum") });
    try {
      await handle.migrate();
      await tenantContext(handle.db, "Quorum");
    } finally {
      await handle.close();
    }
    const quorumEnv = { CAIRN_DATA_DIR: join(root, "pglite-quorum") };
    // The use-case test (tests/use-cases/review-quorum.test.ts) covers the rest.
    expect(runCli(["review-quorum", "--tenant", "Quorum", "2"], quorumEnv).stdout).toContain(
      "each review needs 2 distinct people's approvals (2)",
    );
    const tooMany = runCli(["review-quorum", "--tenant", "Quorum", "11"], quorumEnv);
    expect(tooMany.status).not.toBe(0);
    expect(tooMany.stderr).toContain("approvalsRequired");
  }, 180_000);

  it("sets who decides, and verify-audit names the row edited in the database", async () => {
    const handle = await openDatabase({ kind: "pglite", dataDir });
    let planId = "";
    try {
      await handle.migrate();
      const ctx = await tenantContext(handle.db, "Audit");
      const agent = inProcessAgent(ctx);
      const created = await agent.ok("create_research_plan", {
        name: "Trail",
        researchQuestion: "q",
        steps: planSteps("search", "synthesize"),
      });
      planId = created.planId;
      const next = await agent.ok("get_next_step", { planId });
      await agent.submit(planId, next.step.stepId);
    } finally {
      await handle.close();
    }

    const shown = runCli(["decision-policy", "--tenant", "Audit"], env);
    expect(shown.status).toBe(0);
    expect(shown.stdout).toContain("(people_and_agents)");
    const set = runCli(["decision-policy", "--tenant", "Audit", "people_only"], env);
    expect(set.stdout).toContain('Team "Audit": only people decide checkpoints (people_only).');
    const wrong = runCli(["decision-policy", "--tenant", "Audit", "robots"], env);
    expect(wrong.status).toBe(2);
    expect(wrong.stderr).toContain('not "robots"');

    const ok = runCli(["verify-audit"], env);
    expect(ok.stderr).toBe("");
    expect(ok.status).toBe(0);
    // No decision yet, and no server to run the signing pass: nothing signed, which is no failure.
    expect(ok.stdout).toContain(`ok     ${planId}: 3 rows verify (not signed yet).`);
    expect(ok.stdout).toContain("1 of 1 trails verify.");

    const edit = await openDatabase({ kind: "pglite", dataDir });
    let editedId = "";
    try {
      const [row] = await edit.db
        .update(planAuditLog)
        .set({ payload: { stepOrder: 1, note: "rewritten" } })
        .where(and(eq(planAuditLog.planId, planId), eq(planAuditLog.chainIndex, 3)))
        .returning({ id: planAuditLog.id });
      editedId = row?.id ?? "";
      expect(
        (await edit.db.select().from(tenants).where(eq(tenants.name, "Audit")))[0],
      ).toMatchObject({ decisionPolicy: "people_only" });
      // The switch is on the team's trail, as the CLI's, with its revisit of the
      // team's pending reviews (none waits here); showing the policy wrote nothing.
      expect(
        (await edit.db.select().from(teamAuditLog)).map((row) => [
          row.eventType,
          row.actorType,
          row.actorLabel,
          row.payload,
        ]),
      ).toEqual([
        [
          "decision_policy_changed",
          "system",
          "the admin CLI",
          {
            from: "people_and_agents",
            to: "people_only",
            pendingReviews: { pending: 0, replaced: [] },
          },
        ],
      ]);
    } finally {
      await edit.close();
    }
    const failed = runCli(["verify-audit", planId], env);
    expect(failed.status).toBe(1);
    expect(failed.stdout).toContain(
      `FAILED ${planId}: row 3 (${editedId}): the row's content does not match its digest (it was changed after it was written).`,
    );
    expect(failed.stdout).toContain("0 of 1 trails verify.");
  });
});

/**
 * The CLI's database for the enclosing describe: an embedded folder of its own,
 * or a fresh PostgreSQL database; `env` points the CLI at it, `open` the test.
 */
function cliDatabase(backend: "pglite" | "postgres", folder: string) {
  const env: Record<string, string> = {};
  const open = () =>
    backend === "pglite"
      ? openDatabase({ kind: "pglite", dataDir: env.CAIRN_DATA_DIR ?? "" })
      : openDatabase({ kind: "postgres", url: env.DATABASE_URL ?? "" });
  beforeAll(async () => {
    if (backend === "pglite") env.CAIRN_DATA_DIR = join(root, folder);
    else env.DATABASE_URL = await createPostgresDatabase();
  });
  return { env, open };
}

describe.each(["pglite", "postgres"] as const)(
  "the admin CLI's verify-audit on %s, after rows and plans are deleted",
  (backend) => {
    const { env, open } = cliDatabase(backend, "pglite-deleted");

    it("names the newest rows deleted from a failed plan's trail, and a deleted plan", async () => {
      // A plan failed by a reject, and a second plan that is later deleted.
      const handle = await open();
      const plans: string[] = [];
      try {
        await handle.migrate();
        const agent = inProcessAgent(await tenantContext(handle.db, "Deleted"));
        for (const name of ["Rejected", "Removed"]) {
          const created = await agent.ok("create_research_plan", {
            name,
            researchQuestion: "q",
            steps: planSteps("search"),
          });
          const next = await agent.ok("get_next_step", { planId: created.planId });
          const review = await agent.ok("request_user_review", {
            planId: created.planId,
            stepId: next.step.stepId,
            summary: "Check.",
          });
          await agent.ok("submit_user_decision", {
            planId: created.planId,
            reviewRequestId: review.reviewRequestId,
            decision: "reject",
          });
          plans.push(created.planId);
        }
      } finally {
        await handle.close();
      }
      const [failed, removed] = plans;

      const ok = runCli(["verify-audit"], env);
      expect(ok.stderr).toBe("");
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain("2 of 2 trails verify.");

      const edit = await open();
      let length = 0;
      try {
        const rows = await edit.db
          .select({ chainIndex: planAuditLog.chainIndex })
          .from(planAuditLog)
          .where(eq(planAuditLog.planId, failed ?? ""));
        length = rows.length;
        // The reject and the step's failure, the trail's newest rows, deleted.
        await edit.db
          .delete(planAuditLog)
          .where(
            and(eq(planAuditLog.planId, failed ?? ""), gt(planAuditLog.chainIndex, length - 2)),
          );
        await edit.db.delete(researchPlans).where(eq(researchPlans.id, removed ?? ""));
      } finally {
        await edit.close();
      }

      const one = runCli(["verify-audit", failed ?? ""], env);
      expect(one.status).toBe(1);
      expect(one.stdout).toContain(
        `FAILED ${failed}: rows ${length - 1} to ${length} are missing: the trail ends at row ${length - 2} but its head records ${length} (its newest rows were deleted).`,
      );
      const all = runCli(["verify-audit"], env);
      expect(all.status).toBe(1);
      expect(all.stdout).toContain(`FAILED ${failed}: rows ${length - 1} to ${length} are missing`);
      expect(all.stdout).toContain(
        `FAILED ${removed}: the plan was deleted, and with it its trail of ${length} rows.`,
      );
      expect(all.stdout).toContain("0 of 2 trails verify.");
    });
  },
);

describe.each(["pglite", "postgres"] as const)(
  "the admin CLI's verify-audit of the signed head on %s",
  (backend) => {
    const { env, open } = cliDatabase(backend, "pglite-signed");

    it("reports rows not signed yet, a decision appended with SQL, and a key rotated out", async () => {
      // A person's approve signs the head; the agent's next step is not signed yet.
      const handle = await open();
      let planId = "";
      let signed = 0;
      let rows = 0;
      let stepId = "";
      try {
        await handle.migrate();
        const agent = inProcessAgent(await tenantContext(handle.db, "Signed"));
        const created = await agent.ok("create_research_plan", {
          name: "Signed",
          researchQuestion: "q",
          steps: planSteps("search", "analyze", "synthesize"),
        });
        planId = created.planId;
        const first = await agent.ok("get_next_step", { planId });
        stepId = first.step.stepId;
        const review = await agent.ok("request_user_review", {
          planId,
          stepId,
          summary: "Check.",
          proposedResult: { findings: "ok" },
        });
        await agent.ok("submit_user_decision", {
          planId,
          reviewRequestId: review.reviewRequestId,
          decision: "approve",
        });
        signed = (await handle.db.select().from(planAuditLog)).length;
        const next = await agent.ok("get_next_step", { planId });
        await agent.submit(planId, next.step.stepId);
        rows = (await handle.db.select().from(planAuditLog)).length;
      } finally {
        await handle.close();
      }
      const keyId = auditKeyring().current.id;

      const ok = runCli(["verify-audit", planId], env);
      expect(ok.stderr).toBe("");
      expect(ok.status).toBe(0);
      expect(ok.stdout).toContain(
        `ok     ${planId}: ${rows} rows verify (rows 1 to ${signed} signed with key ${keyId}, rows ${signed + 1} to ${rows} not signed yet).`,
      );

      // After a rotation: the key that signed listed as previous, then not.
      const next = { CAIRN_AUDIT_KEY: "the-next-audit-key-the-next-audit-key" };
      const rotated = runCli(["verify-audit", planId], {
        ...env,
        ...next,
        CAIRN_AUDIT_PREVIOUS_KEYS: process.env.CAIRN_AUDIT_KEY ?? "",
      });
      expect(rotated.status).toBe(0);
      expect(rotated.stdout).toContain(`rows 1 to ${signed} signed with key ${keyId}`);
      const dropped = runCli(["verify-audit", planId], { ...env, ...next });
      expect(dropped.status).toBe(1);
      expect(dropped.stdout).toContain(
        `FAILED ${planId}: the head signed at row ${signed} names key ${keyId}, which Cairn does not hold`,
      );

      // A person's approve over the web, appended with plain SQL.
      const edit = await open();
      let forged = "";
      try {
        const [plan] = await edit.db.select().from(researchPlans);
        const [row] = await edit.db
          .insert(planAuditLog)
          .values({
            tenantId: plan?.tenantId ?? "",
            planId,
            stepId,
            eventType: "user_reviewed",
            actorType: "user",
            actorLabel: "Ada",
            payload: { action: "decision", decision: "approve", channel: "web" },
          })
          .returning({ id: planAuditLog.id });
        forged = row?.id ?? "";
      } finally {
        await edit.close();
      }
      const failed = runCli(["verify-audit"], env);
      expect(failed.status).toBe(1);
      expect(failed.stdout).toContain(
        `FAILED ${planId}: row ${rows + 1} (${forged}) is a decision after the last signed head: Cairn signs the head in every decision's transaction, so it was written outside Cairn.`,
      );
      expect(failed.stdout).toContain("0 of 1 trails verify.");
      // Four runs of the CLI, each opening the embedded folder anew.
    }, 240_000);
  },
);
