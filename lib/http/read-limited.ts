/**
 * Reads a body as UTF-8 text, at most `limit` bytes: undefined when it is
 * larger, and then the rest is left unread (a web stream is cancelled, a Node
 * stream destroyed), so a huge or endless body costs no more than the limit.
 * Used where Cairn reads a body it does not control: an MCP request (a web
 * stream, or Node's own request at the MCP door), a language model's answer.
 */
import { IncomingMessage } from "node:http";
import { Readable } from "node:stream";

export async function readLimited(
  body: AsyncIterable<Uint8Array> | null,
  limit: number,
): Promise<string | undefined> {
  if (!body) return "";
  if (body instanceof Readable) return readStream(body, limit);
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A Node stream read by its events rather than its async iterator, whose
 * generator, promises and end-of-stream watch were about a thirtieth of a
 * 2025-era MCP call's CPU in the server (docs/performance.md, "A call without a
 * web Request"). The same outcomes: its text, undefined past the limit (the
 * stream destroyed), its error, or a premature close's.
 */
function readStream(stream: Readable, limit: number): Promise<string | undefined> {
  if (stream.readableEnded) return Promise.resolve("");
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = () => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      stream.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      if (size > limit) {
        stop();
        // As the stream's own async iterator lets go of a server's request
        // (Node's `destroyer`): detached from its socket first, so that the
        // answer (413) still goes out on it.
        if (stream instanceof IncomingMessage) Object.assign(stream, { socket: null });
        stream.destroy();
        resolve(undefined);
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      stop();
      resolve(Buffer.concat(chunks, size).toString("utf8"));
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => {
      stop();
      reject(Object.assign(new Error("Premature close"), { code: "ERR_STREAM_PREMATURE_CLOSE" }));
    };
    stream.on("data", onData);
    stream.on("end", onEnd);
    stream.on("error", onError);
    stream.on("close", onClose);
    if (stream.destroyed) onClose();
  });
}
