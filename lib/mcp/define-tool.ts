import type { ToolAnnotations } from "@modelcontextprotocol/server";
import type { z } from "zod";
import type { ServiceContext } from "../services/shared/context";

/**
 * One MCP tool: what tools/list shows and the use case tools/call runs. The
 * input schema is the service's own, so both doors validate the same way.
 */
export type ToolDefinition<
  In extends z.ZodType = z.ZodType,
  Out extends z.ZodType = z.ZodType,
  Name extends string = string,
> = {
  /** Kept as its literal type, so a client's calls can be typed by tool name. */
  name: Name;
  title: string;
  description: string;
  inputSchema: In;
  outputSchema: Out;
  annotations: ToolAnnotations;
  /** MCP Apps: the card the tool's result is shown in, or app-only visibility (lib/mcp/apps.ts). */
  _meta?: Record<string, unknown>;
  /** Calls without a tool-call log row (the transport's own health check). */
  skipCallLog?: boolean;
  run(ctx: ServiceContext, input: z.input<In>): Promise<z.output<Out>>;
};

export function defineTool<In extends z.ZodType, Out extends z.ZodType, const Name extends string>(
  tool: ToolDefinition<In, Out, Name>,
): ToolDefinition<In, Out, Name> {
  return tool;
}

/**
 * A tool's annotations from what it does, each hint false unless named: most
 * tools change Cairn's own records, none destroyed, nothing outside Cairn.
 * The hints keep tools/list's order (read-only, destructive, idempotent, open world).
 */
export function annotations(
  does: { readOnly?: true; destructive?: true; idempotent?: true; openWorld?: true } = {},
): ToolAnnotations {
  return {
    readOnlyHint: does.readOnly ?? false,
    destructiveHint: does.destructive ?? false,
    idempotentHint: does.idempotent ?? false,
    openWorldHint: does.openWorld ?? false,
  };
}
