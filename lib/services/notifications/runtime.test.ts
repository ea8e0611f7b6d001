/**
 * The notifier's kicks: passes never overlap, kicks during a pass run one more
 * pass after it, and that pass has the widest scope asked for, so a resend's
 * or the timer's "all" is never narrowed to the "fan-out" of a call's kick.
 */
import { afterAll, describe, expect, it, vi } from "vitest";
import type { Database } from "../../db/client";
import type { PassScope } from "./dispatcher";

const passes: { scope: PassScope; finish: () => void }[] = [];
vi.mock("./dispatcher", () => ({
  runNotificationPass: (_db: unknown, _config: unknown, scope: PassScope) =>
    new Promise<void>((finish) => passes.push({ scope, finish })),
}));

const { kickNotifier, startNotifier } = await import("./runtime");

/** Lets the notifier's loop go on after a pass settles. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("the notifier's kicks", () => {
  afterAll(() => {
    const state = (globalThis as { __cairnNotifier?: { timer: NodeJS.Timeout } }).__cairnNotifier;
    if (state) clearInterval(state.timer);
  });

  it("runs one pass at a time, and one more after it of the widest scope asked", async () => {
    startNotifier({} as Database);
    expect(passes.map((p) => p.scope)).toEqual(["all"]);
    kickNotifier("fan-out");
    kickNotifier("all");
    kickNotifier("fan-out");
    expect(passes).toHaveLength(1);
    passes[0]?.finish();
    await settle();
    expect(passes.map((p) => p.scope)).toEqual(["all", "all"]);
    passes[1]?.finish();
    await settle();
    expect(passes).toHaveLength(2);
  });

  it("keeps a call's kick to its own fan-out, and several such kicks to one more pass", async () => {
    kickNotifier("fan-out");
    expect(passes.at(-1)?.scope).toBe("fan-out");
    kickNotifier("fan-out");
    kickNotifier("fan-out");
    passes.at(-1)?.finish();
    await settle();
    expect(passes.slice(2).map((p) => p.scope)).toEqual(["fan-out", "fan-out"]);
    passes.at(-1)?.finish();
    await settle();
    expect(passes).toHaveLength(4);
  });
});
