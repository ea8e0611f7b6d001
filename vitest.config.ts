import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { writeToolIndex } from "./scripts/tool-index";

const root = fileURLToPath(new URL(".", import.meta.url));

// The tool registry is written from lib/mcp/tools, not kept (scripts/tool-index.ts).
writeToolIndex();

export default defineConfig({
  resolve: {
    alias: {
      "@": root,
      // Tests are server code: `import "server-only"` is the no-op it is in
      // Next.js's server layers (Next.js resolves it itself; the package is not installed).
      "server-only": `${root}node_modules/next/dist/compiled/server-only/empty.js`,
    },
  },
  test: {
    // Every test signs and checks audit heads with one key (docs/audit.md), as
    // the servers and CLI runs it starts inherit it.
    env: { CAIRN_AUDIT_KEY: "test-audit-key-test-audit-key-test-audit-key" },
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          // bench/: the regression gate's comparison, which CI trusts to fail, and
          // the median of the report's paired ratios.
          include: ["lib/**/*.test.ts", "bench/**/*.test.ts"],
          environment: "node",
        },
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["tests/**/*.test.ts"],
          environment: "node",
          globalSetup: ["tests/global-setup.ts"],
          testTimeout: 60_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
