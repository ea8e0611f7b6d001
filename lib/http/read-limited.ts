/**
 * Reads a body as UTF-8 text, at most `limit` bytes: undefined when it is
 * larger, and then the rest is left unread (leaving the loop cancels a web
 * stream and destroys a Node stream), so a huge or endless body costs no more
 * than the limit. Used where Cairn reads a body it does not control: an MCP
 * request (a web stream, or Node's own request at the MCP door), a language
 * model's answer.
 */
export async function readLimited(
  body: AsyncIterable<Uint8Array> | null,
  limit: number,
): Promise<string | undefined> {
  if (!body) return "";
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.byteLength;
    if (size > limit) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
