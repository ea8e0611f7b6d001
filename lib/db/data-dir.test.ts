import { chmodSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { openDatabase } from "./client";
import { preparePrivateDataDir } from "./data-dir";
import { acquireEmbeddedLock } from "./embedded-lock";

const roots: string[] = [];
function tempRoot(): string {
  const root = mkdtempSync(join(tmpdir(), "cairn-datadir-"));
  roots.push(root);
  return root;
}
afterEach(() => {
  vi.restoreAllMocks();
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

const modeOf = (path: string) => statSync(path).mode & 0o777;

describe.skipIf(process.platform === "win32")("the embedded database folder", () => {
  it("is created private to its user, with its parent, when the database first opens", async () => {
    const parent = join(tempRoot(), "data");
    const dataDir = join(parent, "pglite");
    const handle = await openDatabase({ kind: "pglite", dataDir });
    try {
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(parent)).toBe(0o700);
    } finally {
      await handle.close();
    }
  }, 60_000);

  it("is tightened when an existing folder and its parent are open to others, saying so once", () => {
    const parent = join(tempRoot(), "data");
    const dataDir = join(parent, "pglite");
    mkdirSync(dataDir, { recursive: true });
    chmodSync(parent, 0o755);
    chmodSync(dataDir, 0o755);
    const warn = vi.spyOn(console, "warn").mockImplementation(() => {});

    // What openDatabase does first, before PGlite touches the folder.
    const release = acquireEmbeddedLock(dataDir);
    try {
      expect(modeOf(dataDir)).toBe(0o700);
      expect(modeOf(parent)).toBe(0o700);
      const lines = warn.mock.calls.map((call) => String(call[0]));
      expect(lines.filter((line) => line.includes("tightened"))).toEqual([
        `Cairn: tightened permissions of ${dataDir} to 0700 (was 0755).`,
        `Cairn: tightened permissions of ${parent} to 0700 (was 0755).`,
      ]);
    } finally {
      release();
    }

    // Already private: the next start says nothing.
    warn.mockClear();
    preparePrivateDataDir(dataDir);
    expect(warn).not.toHaveBeenCalled();
  });

  it("leaves a parent that holds other things alone (a home folder, /var/lib), but not the folder", () => {
    const parent = join(tempRoot(), "shared");
    const dataDir = join(parent, "pglite");
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(parent, "someone-elses-file"), "");
    chmodSync(parent, 0o755);
    chmodSync(dataDir, 0o750);
    const lines: string[] = [];

    expect(preparePrivateDataDir(dataDir, (line) => lines.push(line))).toBe(dataDir);
    expect(modeOf(dataDir)).toBe(0o700);
    expect(modeOf(parent)).toBe(0o755);
    expect(lines).toEqual([`Cairn: tightened permissions of ${dataDir} to 0700 (was 0750).`]);
  });
});
