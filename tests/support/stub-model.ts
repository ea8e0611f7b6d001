/**
 * A stand-in for the OpenAI-compatible language model extract_data calls
 * (CAIRN_LLM_BASE_URL): answers every chat completion with an empty JSON
 * object, so extract_data gets past its configuration check and reads its
 * sources, and counts the requests. For tests that need extract_data to run, not
 * to extract anything in particular (tests/extract-data.test.ts scripts replies).
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";

export type StubModel = { baseUrl: string; requests(): number; stop(): Promise<void> };

export async function startStubModel(): Promise<StubModel> {
  let requests = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      requests += 1;
      response.writeHead(200, { "Content-Type": "application/json" });
      response.end(
        JSON.stringify({ choices: [{ message: { role: "assistant", content: "{}" } }] }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
