import { defineConfig } from "@playwright/test";

const port = Number(process.env.CAIRN_E2E_PORT ?? 3107);

/**
 * Browser tests run against the production build (`next build` runs first in
 * `npm run test:e2e`) in Debian's Chromium, on a fresh embedded database.
 */
export default defineConfig({
  testDir: "e2e",
  outputDir: "test-results",
  fullyParallel: false,
  workers: 1,
  forbidOnly: Boolean(process.env.CI),
  retries: 0,
  reporter: [["list"]],
  use: {
    baseURL: `http://127.0.0.1:${port}`,
    screenshot: "only-on-failure",
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
  webServer: {
    command: `rm -rf .data/e2e && npx next start -H 127.0.0.1 -p ${port}`,
    url: `http://127.0.0.1:${port}/`,
    reuseExistingServer: false,
    timeout: 120_000,
    env: { CAIRN_DATA_DIR: ".data/e2e", DATABASE_URL: "" },
  },
});
