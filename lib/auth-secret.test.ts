import { chmodSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { AUTH_SECRET_FILE, resolveAuthSecret } from "./auth-secret";
import { ConfigError, parseEnv } from "./env";

const folders: string[] = [];
function tempDataDir() {
  const folder = mkdtempSync(join(tmpdir(), "cairn-secret-"));
  folders.push(folder);
  return join(folder, "pglite");
}
afterEach(() => {
  vi.restoreAllMocks();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe("resolveAuthSecret", () => {
  it("generates a secret on first start of the embedded database and keeps it", () => {
    const dataDir = tempDataDir();
    const first = resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }));
    expect(first.length).toBeGreaterThanOrEqual(32);
    const file = join(dataDir, AUTH_SECRET_FILE);
    expect(readFileSync(file, "utf8").trim()).toBe(first);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }))).toBe(first);
  });

  it.skipIf(process.platform === "win32")(
    "restricts an existing secret file and its folder to their owner",
    () => {
      const dataDir = tempDataDir();
      const file = join(dataDir, AUTH_SECRET_FILE);
      const secret = "x".repeat(43);
      resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }));
      writeFileSync(file, `${secret}\n`);
      chmodSync(file, 0o644);
      chmodSync(dataDir, 0o755);
      const warn = vi.spyOn(console, "warn").mockImplementation(() => {});

      expect(resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }))).toBe(secret);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      expect(statSync(dirname(dataDir)).mode & 0o777).toBe(0o700);
      expect(warn.mock.calls.map((call) => call[0])).toContain(
        `Cairn: tightened permissions of ${file} to 0600 (was 0644).`,
      );
    },
  );

  it("replaces a too-short secret with a new file readable by its owner only", () => {
    const dataDir = tempDataDir();
    const file = join(dataDir, AUTH_SECRET_FILE);
    resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }));
    writeFileSync(file, "short\n");
    chmodSync(file, 0o644);

    const secret = resolveAuthSecret(parseEnv({ CAIRN_DATA_DIR: dataDir }));
    expect(secret.length).toBeGreaterThanOrEqual(32);
    expect(readFileSync(file, "utf8").trim()).toBe(secret);
    expect(statSync(file).mode & 0o777).toBe(0o600);
  });

  it("uses AUTH_SECRET when given", () => {
    const secret = "s".repeat(40);
    expect(
      resolveAuthSecret(parseEnv({ AUTH_SECRET: secret, CAIRN_DATA_DIR: tempDataDir() })),
    ).toBe(secret);
  });

  it("refuses to start in production on a server database without AUTH_SECRET", () => {
    const config = parseEnv({
      NODE_ENV: "production",
      DATABASE_URL: "postgres://db.example/cairn",
      CAIRN_DATA_DIR: tempDataDir(),
    });
    expect(() => resolveAuthSecret(config)).toThrow(ConfigError);
    expect(() => resolveAuthSecret(config)).toThrow(/AUTH_SECRET is required when DATABASE_URL/);
  });
});

describe("parseEnv", () => {
  it("applies the documented defaults", () => {
    const config = parseEnv({});
    expect(config).toMatchObject({
      NODE_ENV: "development",
      CAIRN_DATA_DIR: ".data/pglite",
      CAIRN_STALL_THRESHOLD_SECONDS: 1800,
      CAIRN_MAX_BODY_BYTES: 1_048_576,
    });
    expect(config.DATABASE_URL).toBeUndefined();
  });

  it("treats an empty DATABASE_URL as unset", () => {
    expect(parseEnv({ DATABASE_URL: "" }).DATABASE_URL).toBeUndefined();
  });

  it("names every invalid variable", () => {
    expect(() =>
      parseEnv({
        DATABASE_URL: "mysql://x",
        CAIRN_STALL_THRESHOLD_SECONDS: "soon",
        AUTH_SECRET: "short",
      }),
    ).toThrow(
      /DATABASE_URL: must be a postgres[\s\S]*AUTH_SECRET: must be at least 32[\s\S]*CAIRN_STALL_THRESHOLD_SECONDS/,
    );
  });
});
