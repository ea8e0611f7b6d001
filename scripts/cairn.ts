/**
 * Cairn's admin CLI: `npm run cairn -- <command> [options]`. It opens the same
 * database as the server (DATABASE_URL, or the embedded folder in CAIRN_DATA_DIR).
 */
import { parseArgs } from "node:util";
import { closeDb, getDatabaseHandle } from "@/lib/db/client";
import { isAppError } from "@/lib/plan-engine/app-error";
import { createApiKey, createUser } from "@/lib/services/accounts";

const USAGE = `Usage: npm run cairn -- <command> [options]

Commands:
  create-user --email E --password P --role admin|researcher --tenant NAME [--name N]
      Creates a user, and the tenant when it is new.
  create-api-key --email E [--name LABEL]
      Creates an API key for the user; the key is printed once, alone on the last line.
  migrate
      Applies the database migrations in drizzle/ (needed for a DATABASE_URL server;
      the embedded database migrates itself).

The database is the server's: DATABASE_URL when set, else the embedded folder
CAIRN_DATA_DIR (default .data/pglite), which only one process can open at a time.`;

const OPTIONS = {
  email: { type: "string" },
  password: { type: "string" },
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
  if (extra.length > 0) throw new UsageError(`Unexpected argument(s): ${extra.join(" ")}`);

  switch (command) {
    case "migrate": {
      const handle = await getDatabaseHandle();
      // The embedded database has just migrated itself on open.
      if (handle.kind === "postgres") await handle.migrate();
      console.log(`Migrations applied (${handle.kind}).`);
      return 0;
    }
    case "create-user": {
      const { db } = await getDatabaseHandle();
      const created = await createUser(db, {
        email: required(values.email, "--email"),
        password: required(values.password, "--password"),
        role: required(values.role, "--role") as "admin" | "researcher",
        tenant: required(values.tenant, "--tenant"),
        name: values.name,
      });
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
    default:
      throw new UsageError(`Unknown command "${command}".`);
  }
}

class UsageError extends Error {}

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
