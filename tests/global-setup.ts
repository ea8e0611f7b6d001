import type { TestProject } from "vitest/node";
import { startPostgres } from "./support/postgres-server";

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}

/** One PostgreSQL 15 cluster for the whole integration run; each test file makes its own database in it. */
export default async function setup(project: TestProject) {
  const server = await startPostgres();
  project.provide("postgresUrl", server.url);
  return () => server.stop();
}
