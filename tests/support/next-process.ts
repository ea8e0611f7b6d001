/**
 * The production server (build/server.cjs, as `npm run serve` starts it:
 * server.ts, Next behind Cairn's own /api/mcp door) on a free loopback port, in its own
 * process group so that stopping it ends every process it started. Shared by the
 * integration and browser tests (tests/support/app-server.ts) and the benchmark
 * (bench/support/next-server.ts).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { freePort } from "./postgres-server";

/** Bundled from server.ts by `npm run build`. */
export const SERVER_BUNDLE = "build/server.cjs";

/**
 * Node's flags for the server, read from package.json's `serve` script
 * (`node <flags> build/server.cjs`), the one place they are written, so the
 * tests and the benchmark run the server as `npm start` and `npm run serve` do:
 * the old generation's cap keeps V8's room for garbage small (docs/performance.md,
 * "Memory at 32 agents").
 */
function serverNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync("package.json", "utf8")) as {
    scripts?: { serve?: string };
  };
  const words = (manifest.scripts?.serve ?? "").split(" ");
  if (words[0] !== "node" || words.at(-1) !== SERVER_BUNDLE) {
    throw new Error(`package.json's serve script is not "node [flags] ${SERVER_BUNDLE}".`);
  }
  return words.slice(1, -1);
}

export type NextProcess = {
  url: string;
  port: number;
  pid: number;
  /** Whether stop() has been called. */
  readonly stopped: boolean;
  /** What the server has written to stdout and stderr so far (its first megabyte). */
  output(): string;
  stop(): Promise<void>;
  /** Ends the server with SIGKILL, as a crash would: no shutdown of any kind. */
  kill(): Promise<void>;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function waitUntilReady(url: string, child: ChildProcess, output: () => string) {
  const deadline = Date.now() + 90_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited early:\n${output()}`);
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    await sleep(200);
  }
  throw new Error(`the server did not become ready:\n${output()}`);
}

/** Starts the production server with these variables over the current environment and waits until it answers. */
export async function startNextProcess(
  env: Record<string, string>,
  port?: number,
): Promise<NextProcess> {
  port ??= await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [...serverNodeFlags(), SERVER_BUNDLE], {
    env: {
      ...process.env,
      NODE_ENV: "production",
      NEXT_TELEMETRY_DISABLED: "1",
      HOST: "127.0.0.1",
      PORT: String(port),
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  // The last of the output, for the error when the server does not start, and
  // the first megabyte of it for tests that read what the server printed.
  let log = "";
  let all = "";
  const append = (chunk: Buffer) => {
    log = (log + chunk.toString()).slice(-20_000);
    if (all.length < 1_000_000) all += chunk.toString();
  };
  child.stdout?.on("data", append);
  child.stderr?.on("data", append);
  try {
    await waitUntilReady(url, child, () => log);
  } catch (error) {
    if (child.pid && child.exitCode === null) process.kill(-child.pid, "SIGKILL");
    throw error;
  }
  const pid = child.pid as number;
  let stopped = false;
  return {
    url,
    port,
    pid,
    get stopped() {
      return stopped;
    },
    output: () => all,
    async stop() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-pid, "SIGTERM");
      await Promise.race([exited, sleep(10_000)]);
      if (child.exitCode === null) process.kill(-pid, "SIGKILL");
    },
    async kill() {
      if (stopped) return;
      stopped = true;
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      process.kill(-pid, "SIGKILL");
      await exited;
    },
  };
}
