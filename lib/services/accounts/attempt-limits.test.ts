/** docs/web.md's table of attempt limits held to `ATTEMPT_POLICIES`, one row per kind. */
import { describe, expect, it } from "vitest";
import { docTable } from "../../docs-table";
import { ATTEMPT_POLICIES, type AttemptKind } from "./attempt-limits";

/** Each kind's row in docs/web.md ("counted per"); a new kind fails to compile until it has one. */
const ROWS: Record<AttemptKind, string> = {
  sign_in_account: "e-mail (whether or not an account has it)",
  sign_in_address: "client address",
  setup_address: "client address, first-run set-up codes",
  oauth_registration_address: "client address, OAuth client registrations (`/register`)",
  oauth_metadata_document_address:
    "client address, OAuth client metadata documents fetched (`/authorize` naming a URL as client_id, docs/oauth.md)",
};

const minutes = (text: string) =>
  /per hour/.test(text) ? 60 : Number(/per (\d+) minutes/.exec(text)?.[1]);

describe("docs/web.md's attempt limits", () => {
  it("give each kind's limit, window and blocks as ATTEMPT_POLICIES has them", () => {
    const documented = docTable("docs/web.md", "counted per").map(
      ([per = "", allowed = "", then = ""]) => [
        per,
        {
          limit: Number(/^\d+/.exec(allowed)?.[0]),
          windowSeconds: minutes(allowed) * 60,
          firstBlockSeconds: Number(/refused for (\d+) minutes?/.exec(then)?.[1]) * 60,
          maxBlockSeconds: Number(/up to (\d+)/.exec(then)?.[1]) * 60,
        },
      ],
    );
    const kinds = Object.keys(ROWS) as AttemptKind[];
    expect(documented).toEqual(kinds.map((kind) => [ROWS[kind], ATTEMPT_POLICIES[kind]]));
  });
});
