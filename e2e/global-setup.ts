import { existsSync } from "node:fs";
import { startPostgres } from "../tests/support/postgres-server";

/**
 * Fails at once, with the fix, when the browser is missing (never a silent skip),
 * and starts the PostgreSQL 15 cluster the specs' servers use. Workers inherit its
 * URL through the environment.
 */
export default async function globalSetup() {
  const chromium = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
  if (!existsSync(chromium)) {
    throw new Error(
      `Chromium is not installed at ${chromium}. Install Debian's: apt-get install -y chromium (or set CAIRN_CHROMIUM).`,
    );
  }
  if (!existsSync(".next/BUILD_ID")) {
    throw new Error("No production build: run `npm run build` before the browser tests.");
  }
  const server = await startPostgres();
  process.env.CAIRN_TEST_POSTGRES_URL = server.url;
  return () => server.stop();
}
