import { defineConfig } from "drizzle-kit";

// Generation only needs the schema; `npm run db:migrate` applies migrations through
// Cairn's own client so the embedded and server databases share one code path.
export default defineConfig({
  dialect: "postgresql",
  schema: "./lib/db/schema.ts",
  out: "./drizzle",
});
