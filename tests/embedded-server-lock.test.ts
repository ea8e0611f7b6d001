import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RunningApp, startFreshAppServer } from "./support/app-server";
import { freePort } from "./support/postgres-server";

describe("two servers on one embedded folder", () => {
  let first: RunningApp;
  beforeAll(async () => {
    first = await startFreshAppServer("pglite");
  });
  afterAll(async () => {
    await first?.stop();
  });

  it("the second stops at once with a message naming the folder; the first keeps serving", async () => {
    const port = await freePort();
    const second = spawnSync(
      process.execPath,
      ["node_modules/next/dist/bin/next", "start", "-H", "127.0.0.1", "-p", String(port)],
      {
        encoding: "utf8",
        timeout: 60_000,
        env: {
          ...process.env,
          NODE_ENV: "production",
          DATABASE_URL: "",
          CAIRN_DATA_DIR: first.dataDir,
        },
      },
    );
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(
      `Cairn cannot start: The embedded database folder ${first.dataDir} is in use by process`,
    );
    const home = await fetch(`${first.url}/sign-in`, { redirect: "manual" });
    expect(home.status).toBe(307);
    expect(home.headers.get("location")).toContain("/setup");
  });
});
