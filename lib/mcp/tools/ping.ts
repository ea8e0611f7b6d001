import { z } from "zod";
import { defineTool } from "../define-tool";

export const pingTool = defineTool({
  name: "ping",
  title: "Check the connection",
  description:
    "Check that Cairn is reachable and your credential works. Returns ok and the server time; changes nothing.",
  inputSchema: z.object({}),
  outputSchema: z.object({ ok: z.literal(true), serverTime: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  skipCallLog: true,
  run: async () => ({ ok: true as const, serverTime: new Date().toISOString() }),
});
