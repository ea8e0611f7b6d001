import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hashApiKey } from "@/lib/auth/api-key";
import { verifyPassword } from "@/lib/auth/password";
import { openDatabase } from "@/lib/db/client";
import { apiKeys, tenants, users } from "@/lib/db/schema";
import { createPostgresDatabase } from "./support/databases";
import { holdEmbeddedDatabase, runCli } from "./support/run-cli";

const root = mkdtempSync(join(tmpdir(), "cairn-cli-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("the admin CLI on the embedded database", () => {
  const dataDir = join(root, "pglite");
  const env = { CAIRN_DATA_DIR: dataDir };

  it("creates a user and its tenant, then a key printed alone on the last line", async () => {
    const user = runCli(
      [
        "create-user",
        "--email",
        "Ada@Example.com",
        "--password",
        "correct horse",
        "--role",
        "admin",
        "--tenant",
        "Acme",
      ],
      env,
    );
    expect(user.stderr).toBe("");
    expect(user.status).toBe(0);
    expect(user.stdout).toContain('new tenant "Acme"');

    const second = runCli(
      [
        "create-user",
        "--email",
        "bob@example.com",
        "--password",
        "battery staple",
        "--role",
        "researcher",
        "--tenant",
        "Acme",
      ],
      env,
    );
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
      expect(await handle.db.select().from(tenants).where(eq(tenants.name, "Acme"))).toHaveLength(
        1,
      );
    } finally {
      await handle.close();
    }
  });

  it("answers bad input with a clear error and a non-zero exit, writing nothing", () => {
    const bad = runCli(
      [
        "create-user",
        "--email",
        "not-an-email",
        "--password",
        "short",
        "--role",
        "boss",
        "--tenant",
        "X",
      ],
      env,
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
        "--password",
        "whatever1",
        "--role",
        "admin",
        "--tenant",
        "Other",
      ],
      env,
    );
    expect(duplicate.status).toBe(1);
    expect(duplicate.stderr).toContain("CONFLICT");

    const unknown = runCli(["create-api-key", "--email", "nobody@example.com"], env);
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain("NOT_FOUND");

    const missing = runCli(["create-user", "--email", "x@example.com"], env);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("--password is required");

    const typo = runCli(["create-usr"], env);
    expect(typo.status).toBe(2);
    expect(typo.stderr).toContain('Unknown command "create-usr"');
  });

  it("a second process on a folder in use fails fast, naming the folder", async () => {
    const holder = await holdEmbeddedDatabase(dataDir);
    try {
      const started = Date.now();
      const blocked = runCli(["create-api-key", "--email", "ada@example.com"], env);
      expect(blocked.status).toBe(1);
      expect(blocked.stderr).toContain(
        `The embedded database folder ${dataDir} is in use by process`,
      );
      expect(blocked.stderr).toContain("CAIRN_DATA_DIR");
      // "Fast" means it did not wait for the holder (which never lets go here).
      expect(Date.now() - started).toBeLessThan(60_000);
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
          "--password",
          "long enough",
          "--role",
          "researcher",
          "--tenant",
          "PG",
        ],
        { DATABASE_URL: url },
      ).status,
    ).toBe(0);
    const key = runCli(["create-api-key", "--email", "pg@example.com"], { DATABASE_URL: url });
    expect(key.status).toBe(0);
    expect(key.stdout.trim().split("\n").at(-1)).toMatch(/^cairn_/);
  });
});
