/**
 * Cairn's admin CLI: `npm run cairn -- <command> [options]`. It opens the same
 * database as the server (DATABASE_URL, or the embedded folder in CAIRN_DATA_DIR).
 * A new user's password comes from standard input or CAIRN_PASSWORD: a command
 * line is visible to every local user (ps, /proc) and stays in shell history.
 */
import { parseArgs } from "node:util";
import { closeDb, getDatabaseHandle } from "@/lib/db/client";
import { isAppError } from "@/lib/plan-engine/app-error";
import { isDecisionPolicy } from "@/lib/plan-engine/states";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";
import { issueSetupCode } from "@/lib/services/accounts/setup-codes";
import { verifyAllTrails, verifyPlanTrail } from "@/lib/services/audit/audit-chain";
import { trailFailure, trailSigning } from "@/lib/services/audit/chain-verifier";
import { teamDecisionPolicy } from "@/lib/services/reviews/decision-policy";
import { teamReviewQuorum } from "@/lib/services/reviews/review-quorum";

const USAGE = `Usage: npm run cairn -- <command> [options]

Commands:
  create-user --email E --password-stdin --role admin|researcher --tenant NAME [--name N]
      Creates a user, and the tenant when it is new. The password is read from
      standard input (one trailing newline is dropped), or taken from the
      environment variable CAIRN_PASSWORD instead of --password-stdin.
      (--password P still works, but other users can see it: it warns.)
  create-api-key --email E [--name LABEL]
      Creates an API key for the user; the key is printed once, alone on the last line.
  setup-code
      On a fresh install (nobody has an account yet), prints a new one-time code
      for the first-run page, alone on the last line. Codes printed before keep
      working; all stop once the first admin exists.
  verify-audit [PLAN_ID]
      Checks the hash chain of one plan's audit trail, or of every plan's (and
      reports plans deleted with their trails), and its signed head, and names
      the first row that does not match, the rows missing from its end, or the
      signed head that no longer holds. Exits 1 when a trail fails. Rows after
      the last signed head are reported as not signed yet, which is not a
      failure. The key is the server's: CAIRN_AUDIT_KEY and
      CAIRN_AUDIT_PREVIOUS_KEYS, or the one derived from AUTH_SECRET.
  decision-policy --tenant NAME [people_only|people_and_agents]
      Shows, or sets, who may decide the team's checkpoints: people only, or
      people and the agents that relay a person's answer.
  review-quorum --tenant NAME [N]
      Shows, or sets, how many distinct people must approve each review (1 to
      10); a plan or an agent's request may ask for more, never fewer.
  migrate
      Applies the database migrations in drizzle/ (needed for a DATABASE_URL server;
      the embedded database migrates itself).

The database is the server's: DATABASE_URL when set, else the embedded folder
CAIRN_DATA_DIR (default .data/pglite), which only one process can open at a time.`;

const OPTIONS = {
  email: { type: "string" },
  password: { type: "string" },
  "password-stdin": { type: "boolean" },
  role: { type: "string" },
  tenant: { type: "string" },
  name: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: OPTIONS,
    allowPositionals: true,
  });
  const [command, ...extra] = positionals;
  if (values.help || !command) {
    console.log(USAGE);
    return command || values.help ? 0 : 2;
  }
  const takesArgument =
    command === "verify-audit" || command === "decision-policy" || command === "review-quorum";
  if (extra.length > (takesArgument ? 1 : 0)) {
    throw new UsageError(`Unexpected argument(s): ${extra.join(" ")}`);
  }

  switch (command) {
    case "migrate": {
      const handle = await getDatabaseHandle();
      // The embedded database has just migrated itself on open.
      if (handle.kind === "postgres") await handle.migrate();
      console.log(`Migrations applied (${handle.kind}).`);
      return 0;
    }
    case "create-user": {
      // Everything from the caller first: a usage error should not wait for the
      // database, nor the embedded folder stay locked while stdin is read.
      const input = {
        email: required(values.email, "--email"),
        password: await passwordOf(values),
        role: required(values.role, "--role") as "admin" | "researcher",
        tenant: required(values.tenant, "--tenant"),
        name: values.name,
      };
      const { db } = await getDatabaseHandle();
      const created = await createUser(db, input);
      console.log(
        `Created ${values.role} ${values.email} (user ${created.userId}) in ${created.tenantCreated ? "new" : "existing"} tenant "${values.tenant}".`,
      );
      return 0;
    }
    case "create-api-key": {
      const { db } = await getDatabaseHandle();
      const created = await createApiKey(db, {
        email: required(values.email, "--email"),
        name: values.name,
      });
      console.log(`Created API key "${created.name}" (${created.keyPrefix}…) for ${values.email}.`);
      console.log("Store it now: it is shown once and only its hash is kept.");
      console.log(created.key);
      return 0;
    }
    case "setup-code": {
      const { db } = await getDatabaseHandle();
      const code = await issueSetupCode(db);
      console.log("Enter this one-time code on the first-run page (/setup):");
      console.log(code);
      return 0;
    }
    case "verify-audit": {
      const [planId] = extra;
      const { db } = await getDatabaseHandle();
      const results = planId ? [await verifyPlanTrail(db, planId)] : await verifyAllTrails(db);
      for (const result of results) {
        const failure = trailFailure(result);
        console.log(
          failure
            ? `FAILED ${result.planId}: ${failure}.`
            : `ok     ${result.planId}: ${result.rows} rows verify (${trailSigning(result)}).`,
        );
      }
      const failed = results.filter((result) => !result.verified).length;
      console.log(`${results.length - failed} of ${results.length} trails verify.`);
      return failed > 0 ? 1 : 0;
    }
    case "decision-policy": {
      const team = required(values.tenant, "--tenant");
      const [policy] = extra;
      if (policy !== undefined && !isDecisionPolicy(policy)) {
        throw new UsageError(`The policy is people_only or people_and_agents, not "${policy}".`);
      }
      const { db } = await getDatabaseHandle();
      const set = await teamDecisionPolicy(db, team, policy);
      console.log(
        `Team "${team}": ${set === "people_only" ? "only people decide checkpoints" : "people decide checkpoints, and agents may relay a person's answer"} (${set}).`,
      );
      return 0;
    }
    case "review-quorum": {
      const team = required(values.tenant, "--tenant");
      const [n] = extra;
      if (n !== undefined && !/^\d+$/.test(n)) {
        throw new UsageError(`The number of approvals is a whole number, not "${n}".`);
      }
      const { db } = await getDatabaseHandle();
      const set = await teamReviewQuorum(db, team, n === undefined ? undefined : Number(n));
      console.log(
        `Team "${team}": each review needs ${set === 1 ? "one person's approval" : `${set} distinct people's approvals`} (${set}).`,
      );
      return 0;
    }
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

class UsageError extends Error {}

const PASSWORD_ON_COMMAND_LINE =
  "Warning: --password puts the password on the command line, where other users of this machine can read it (ps, /proc) and shell history keeps it. Use --password-stdin or CAIRN_PASSWORD instead.";

/** The new user's password, from exactly one of --password-stdin, CAIRN_PASSWORD and --password. */
async function passwordOf(values: {
  password?: string | undefined;
  "password-stdin"?: boolean | undefined;
}): Promise<string> {
  const fromEnv = process.env.CAIRN_PASSWORD || undefined;
  const given = [
    values["password-stdin"] ? "--password-stdin" : null,
    fromEnv !== undefined ? "CAIRN_PASSWORD" : null,
    values.password !== undefined ? "--password" : null,
  ].filter((way): way is string => way !== null);
  if (given.length > 1) {
    throw new UsageError(`Give the password one way, not with ${given.join(" and ")}.`);
  }
  if (values["password-stdin"]) return readStdin();
  if (fromEnv !== undefined) return fromEnv;
  if (values.password !== undefined) {
    console.error(PASSWORD_ON_COMMAND_LINE);
    return values.password;
  }
  throw new UsageError(
    "A password is required: pipe it to --password-stdin, or set CAIRN_PASSWORD.",
  );
}

/** Standard input up to its end, less the newline that echo or a here-string adds. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks)
    .toString("utf8")
    .replace(/\r?\n$/, "");
}

function required(value: string | undefined, flag: string): string {
  if (value === undefined || value === "") throw new UsageError(`${flag} is required.`);
  return value;
}

main(process.argv.slice(2))
  .catch((error: unknown) => {
    if (error instanceof UsageError) {
      console.error(`${error.message}\n\n${USAGE}`);
      return 2;
    }
    if (isAppError(error)) {
      console.error(`${error.code}: ${error.message}`);
      return 1;
    }
    console.error(error instanceof Error ? error.message : error);
    if (error instanceof Error && error.cause) console.error(error.cause);
    return 1;
  })
  .then(async (code) => {
    await closeDb().catch(() => {});
    process.exit(code);
  });
