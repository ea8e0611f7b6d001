/**
 * readLimited over the bodies Cairn reads: a web stream (a `Request`'s or a
 * `fetch` answer's) and Node's own request, as the MCP door hands it over.
 * Over the limit it answers undefined and reads no further: a web stream is
 * cancelled, a Node stream destroyed.
 */
import { Readable } from "node:stream";
import { describe, expect, it } from "vitest";
import { readLimited } from "./read-limited";

const bytes = (text: string) => new TextEncoder().encode(text);

describe("readLimited", () => {
  it("reads a web stream or a Node stream whole, as UTF-8 across chunk boundaries", async () => {
    // "é" (0xc3 0xa9) split between two chunks.
    const chunks = () => [
      bytes("caf"),
      Uint8Array.of(0xc3),
      Uint8Array.of(0xa9),
      bytes(" au lait"),
    ];
    const web = new ReadableStream<Uint8Array>({
      start(controller) {
        for (const chunk of chunks()) controller.enqueue(chunk);
        controller.close();
      },
    });
    expect(await readLimited(web, 100)).toBe("café au lait");
    expect(await readLimited(Readable.from(chunks()), 100)).toBe("café au lait");
    expect(await readLimited(null, 100)).toBe("");
  });

  it("stops at the limit: a web stream is cancelled and read no further", async () => {
    let pulls = 0;
    let cancelled = false;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulls += 1;
        controller.enqueue(new Uint8Array(1024));
      },
      cancel() {
        cancelled = true;
      },
    });
    expect(await readLimited(endless, 4096)).toBeUndefined();
    expect(cancelled).toBe(true);
    // One chunk past the limit, and the stream's queue ahead of it: not the rest.
    expect(pulls).toBeLessThan(10);
  });

  it("stops at the limit: a Node stream is destroyed and read no further", async () => {
    let reads = 0;
    const endless = new Readable({
      read() {
        reads += 1;
        this.push(Buffer.alloc(1024));
      },
    });
    expect(await readLimited(endless, 4096)).toBeUndefined();
    expect(endless.destroyed).toBe(true);
    expect(reads).toBeLessThan(40);
  });

  it("fails as the stream does: its error, or a close before its end", async () => {
    const failing = new Readable({ read() {} });
    const failed = readLimited(failing, 100);
    failing.push(Buffer.from("par"));
    failing.destroy(new Error("connection reset"));
    await expect(failed).rejects.toThrow("connection reset");
    const cut = new Readable({ read() {} });
    const closed = readLimited(cut, 100);
    cut.push(Buffer.from("par"));
    cut.destroy();
    await expect(closed).rejects.toMatchObject({ code: "ERR_STREAM_PREMATURE_CLOSE" });
    // Listeners are gone once it settles.
    expect(cut.listenerCount("data") + cut.listenerCount("end")).toBe(0);
  });

  it("reads a Node stream that has already ended as empty", async () => {
    const ended = Readable.from([Buffer.from("x")]);
    for await (const _ of ended) {
      // drained
    }
    expect(await readLimited(ended, 100)).toBe("");
  });

  it("takes a body of exactly the limit", async () => {
    expect(await readLimited(Readable.from([Buffer.from("x".repeat(10))]), 10)).toBe(
      "x".repeat(10),
    );
  });
});
