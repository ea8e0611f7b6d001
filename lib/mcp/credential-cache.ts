/**
 * The MCP door's credentials, remembered for a few seconds per key or token so
 * that a call costs no lookup, with revocation still immediate
 * (docs/oauth.md, "Revocation"). The database tells every instance when
 * anything a credential stands for changes (a key or app revoked, a user
 * disabled or deleted, a token ended: the triggers of
 * drizzle/0019_credential_changes.sql, whoever writes), and each instance then
 * forgets all it remembered; the instance that made the change, by a notice
 * to its own session, before it answers. Only while that channel is heard:
 * before it is, and from the moment its connection is lost until it listens
 * again, every call looks its credential up, as without the cache.
 */
import { createHash } from "node:crypto";
import type { ListenEvent } from "../db/client";

/** The channel of drizzle/0019_credential_changes.sql. */
export const CREDENTIALS_CHANGED = "cairn_credentials_changed";

/**
 * How long a checked credential is used without a lookup when nothing was
 * heard about it. Short, so a change the notification cannot carry (a clock
 * passing an OAuth token's expiry is bounded by the token's own expiry) and
 * the key's `last_used_at` (refreshed at most once a minute) stay close.
 */
const REMEMBER_FOR_MS = 15_000;
/**
 * How long an instance remembers nothing after a change of its own: the
 * change is told before its commit, so a credential looked up meanwhile was
 * read as it was before. A transaction tells again at its commit
 * (lib/db/postgres-client.ts); this covers a single statement's own commit,
 * which follows its notice at once.
 */
const QUIET_AFTER_OWN_CHANGE_MS = 1_000;
/** Distinct credentials remembered at most, the oldest forgotten first. */
const MAX_ENTRIES = 10_000;

export type Checked<Principal> = {
  principal: Principal;
  /** When the credential stops being valid by itself (an OAuth token's expiry). */
  expiresAt?: Date;
};

export class CredentialCache<Principal> {
  private readonly entries = new Map<string, { principal: Principal; until: number }>();
  private heard = false;
  /** Moves at every event, so a lookup that overlapped a change is not remembered. */
  private epoch = 0;
  /** Nothing is remembered before this (after a change of this instance's own). */
  private quietUntil = 0;

  /** What the database's listener reports (DatabaseHandle.listen). */
  readonly onEvent = (event: ListenEvent): void => {
    this.entries.clear();
    this.epoch += 1;
    if (event === "changing") this.quietUntil = Date.now() + QUIET_AFTER_OWN_CHANGE_MS;
    else this.heard = event !== "lost";
  };

  /** `credential`'s principal: remembered, or `lookup`'s answer (remembered when it may be). */
  async check(
    credential: string,
    lookup: () => Promise<Checked<Principal> | undefined>,
  ): Promise<Principal | undefined> {
    const key = createHash("sha256").update(credential).digest("base64");
    const now = Date.now();
    const remembered = this.entries.get(key);
    if (remembered && remembered.until > now) return remembered.principal;
    if (remembered) this.entries.delete(key);
    const epoch = this.epoch;
    const found = await lookup();
    if (found && this.heard && epoch === this.epoch && Date.now() >= this.quietUntil) {
      const until = Math.min(now + REMEMBER_FOR_MS, found.expiresAt?.getTime() ?? Infinity);
      if (this.entries.size >= MAX_ENTRIES) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.set(key, { principal: found.principal, until });
    }
    return found?.principal;
  }
}
