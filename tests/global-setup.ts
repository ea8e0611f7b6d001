import { startPostgres } from "./support/postgres-server";

/**
 * One PostgreSQL 15 cluster for the whole integration run; each test file makes
 * its own database in it. Workers inherit the URL through the environment.
 */
export default async function setup() {
  const server = await startPostgres();
  process.env.CAIRN_TEST_POSTGRES_URL = server.url;
  return () => server.stop();
}
