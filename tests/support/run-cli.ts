import { spawn, spawnSync } from "node:child_process";

export type CliResult = { status: number | null; stdout: string; stderr: string };

/** What `npm run cairn` passes as --tsconfig: tsx maps `server-only` to an empty module with it. */
const TSX_ENV = { TSX_TSCONFIG_PATH: "tsconfig.tsx.json" };

/** Runs `npm run cairn -- ...args` as a user would, with the given environment and standard input. */
export function runCli(args: string[], env: Record<string, string>, input = ""): CliResult {
  const result = spawnSync(process.execPath, ["--import", "tsx", "scripts/cairn.ts", ...args], {
    encoding: "utf8",
    env: { ...process.env, ...TSX_ENV, DATABASE_URL: "", CAIRN_PASSWORD: "", ...env },
    input,
    timeout: 120_000,
  });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/** Starts a process that holds the embedded folder open; resolves once it has the lock. */
export function holdEmbeddedDatabase(dataDir: string): Promise<{ release(): Promise<void> }> {
  const child = spawn(
    process.execPath,
    ["--import", "tsx", "tests/support/hold-embedded-database.ts", dataDir],
    { stdio: ["pipe", "pipe", "inherit"], env: { ...process.env, ...TSX_ENV } },
  );
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => reject(new Error(`holder exited early with ${code}`)));
    child.stdout.on("data", (chunk: Buffer) => {
      if (!chunk.toString().includes("ready")) return;
      child.removeAllListeners("exit");
      resolve({
        release: () =>
          new Promise((done) => {
            child.on("exit", () => done());
            child.stdin.end();
          }),
      });
    });
  });
}
