/**
 * PGlite has no lock of its own: two processes on one folder both open it and
 * silently lose each other's writes. Cairn guards the folder with a lock file that
 * names its owner; a second process fails fast with a message naming the folder.
 * A lock left by a process that died is taken over.
 */
import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import { preparePrivateDataDir } from "./data-dir";

export class EmbeddedDatabaseLockedError extends Error {
  override name = "EmbeddedDatabaseLockedError";
}

type LockOwner = { pid: number; hostname: string; startedAt: string };

const LOCK_FILE = "cairn.lock";

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readOwner(lockPath: string): LockOwner | undefined {
  try {
    return JSON.parse(readFileSync(lockPath, "utf8")) as LockOwner;
  } catch {
    return undefined;
  }
}

function tryCreate(lockPath: string, owner: LockOwner): boolean {
  try {
    const fd = openSync(lockPath, "wx", 0o600);
    writeSync(fd, JSON.stringify(owner));
    closeSync(fd);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw error;
  }
}

/** Takes the folder's lock or throws; returns the release function. */
export function acquireEmbeddedLock(dataDir: string): () => void {
  const folder = preparePrivateDataDir(dataDir);
  const lockPath = join(folder, LOCK_FILE);
  const me: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    startedAt: new Date().toISOString(),
  };

  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(lockPath, me)) {
      const release = () => {
        if (readOwner(lockPath)?.pid !== me.pid) return;
        try {
          unlinkSync(lockPath);
        } catch {
          // Already gone: nothing to release.
        }
      };
      process.once("exit", release);
      return release;
    }
    const owner = readOwner(lockPath);
    const held =
      owner !== undefined &&
      owner.pid !== process.pid &&
      (owner.hostname !== me.hostname || isAlive(owner.pid));
    if (held) {
      throw new EmbeddedDatabaseLockedError(
        `The embedded database folder ${folder} is in use by process ${owner.pid} on ${owner.hostname} (since ${owner.startedAt}). ` +
          "Only one Cairn process can open it at a time: stop the other process (a running server or CLI command), " +
          "set CAIRN_DATA_DIR to another folder, or set DATABASE_URL to share a PostgreSQL server.",
      );
    }
    // The owner is gone (or the file is unreadable): take the stale lock over.
    try {
      unlinkSync(lockPath);
    } catch {
      // Another process removed it first; the next attempt decides.
    }
  }
  throw new EmbeddedDatabaseLockedError(
    `Could not take the lock on the embedded database folder ${folder}: another process is starting on it.`,
  );
}
