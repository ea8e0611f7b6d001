/**
 * The embedded database folder (CAIRN_DATA_DIR) holds every tenant's plans, the
 * password hashes and the sign-in secret. PGlite creates its files with default
 * permissions (0666 less the umask, so readable by every local user), so the
 * folder itself is what keeps other users out: Cairn creates it, and its parent
 * when new, with mode 0700, and tightens an existing one left from an older
 * release or created by hand.
 */
import { chmodSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, resolve } from "node:path";

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

export type Logger = (line: string) => void;

// A notice, not output: stderr keeps it out of what scripts read from the CLI's stdout.
const notice: Logger = (line) => console.warn(line);

function octal(mode: number): string {
  return `0${mode.toString(8)}`;
}

/**
 * Restricts `path` to `mode` when it grants group or others anything, saying so
 * in one line. Windows has no such permission bits: nothing to do there.
 */
export function tightenPermissions(path: string, mode: number, log: Logger = notice): void {
  if (process.platform === "win32") return;
  const current = statSync(path).mode & 0o777;
  if ((current & 0o077) === 0) return;
  chmodSync(path, mode);
  log(`Cairn: tightened permissions of ${path} to ${octal(mode)} (was ${octal(current)}).`);
}

/**
 * The parent is tightened only when it exists for the data folder alone (its one
 * entry) and belongs to this user, like the default `.data`. A parent shared
 * with other things (a home folder, /var/lib, /tmp) keeps its mode: changing it
 * would break other software, and the data folder's own 0700 already keeps
 * others out.
 */
function isDedicatedParent(parent: string, folder: string): boolean {
  // No uid (Windows): no permission bits to fix either.
  if (parent === folder) return false;
  const uid = process.getuid?.();
  if (uid === undefined || statSync(parent).uid !== uid) return false;
  const entries = readdirSync(parent);
  return entries.length === 1 && entries[0] === basename(folder);
}

/** Creates the data folder (and any missing parent) private to this user, or tightens it; returns its absolute path. */
export function preparePrivateDataDir(dataDir: string, log: Logger = notice): string {
  const folder = resolve(dataDir);
  // The mode applies to every folder this call creates, the parent included.
  mkdirSync(folder, { recursive: true, mode: PRIVATE_DIR_MODE });
  tightenPermissions(folder, PRIVATE_DIR_MODE, log);
  const parent = dirname(folder);
  if (isDedicatedParent(parent, folder)) tightenPermissions(parent, PRIVATE_DIR_MODE, log);
  return folder;
}
