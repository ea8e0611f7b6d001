import { z } from "zod";
import { parseInput } from "../../services/shared/validation";
import { fetchedSkill, SKILL_NAMES } from "../../skills";
import { defineTool } from "../define-tool";

const getSkillInput = z.object({
  name: z.enum(SKILL_NAMES),
});

/**
 * The next part of the research skills, fetched by the agent when it gets
 * there (an MCP prompt is the user's to pick, so the agent could not fetch one
 * itself). Reads files loaded at start: no database, no tenant data.
 */
export const getSkillTool = defineTool({
  name: "get_skill",
  title: "Get a research skill",
  description:
    "One part of Cairn's research skill, when the research prompt or another part says to continue with it.",
  inputSchema: getSkillInput,
  outputSchema: z.object({ name: z.enum(SKILL_NAMES), title: z.string(), text: z.string() }),
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  run: async (_ctx, input) => fetchedSkill(parseInput(getSkillInput, input).name),
});
