/**
 * Reads a body stream as UTF-8 text, at most `limit` bytes: undefined when it
 * is larger, and then the rest is left unread (the stream is cancelled), so a
 * huge or endless body costs no more than the limit. Used where Cairn reads a
 * body it does not control: an MCP request, a language model's answer.
 */
export async function readLimited(
  body: ReadableStream<Uint8Array> | null,
  limit: number,
): Promise<string | undefined> {
  if (!body) return "";
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel();
      return undefined;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}
