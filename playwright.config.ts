import { defineConfig } from "@playwright/test";

/**
 * Browser tests against the production server (build/server.cjs, built by `npm run
 * build`, which runs before them in `npm test`) in Debian's Chromium. Each worker starts its own server over a fresh
 * database (see e2e/fixtures.ts); the global setup starts PostgreSQL 15.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results/playwright",
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  timeout: 90_000,
  expect: { timeout: 15_000 },
  reporter: [["list"]],
  use: {
    screenshot: "only-on-failure",
    trace: "retain-on-failure",
    launchOptions: {
      executablePath: process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium",
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
      ],
    },
  },
  globalSetup: "./e2e/global-setup.ts",
  // The fixtures seed accounts through the use cases, which are server-only:
  // the tsx settings map that to an empty module (tsconfig.tsx.json).
  tsconfig: "./tsconfig.tsx.json",
});
