/**
 * Cairn's research skills as MCP prompts (prompts/list, prompts/get), on the
 * SDK's low-level handlers like the tools. The list is built once per process
 * from lib/skills; a prompt's text is the skill with the user's message put in
 * as its `request` argument (see `renderSkillPrompt`).
 */
import {
  type GetPromptResult,
  type McpServer,
  type Prompt,
  ProtocolError,
  ProtocolErrorCode,
} from "@modelcontextprotocol/server";
import { getSkill, renderSkillPrompt, SKILLS } from "../skills";

const PROMPT_LIST: Prompt[] = SKILLS.map((skill) => ({
  name: skill.name,
  title: skill.title,
  description: skill.description,
  arguments: [
    { name: "request", description: skill.requestDescription, required: skill.requestRequired },
  ],
}));

export function registerCairnPrompts(server: McpServer): void {
  server.server.setRequestHandler("prompts/list", () => ({ prompts: PROMPT_LIST }));
  server.server.setRequestHandler("prompts/get", (request): GetPromptResult => {
    const skill = getSkill(request.params.name);
    if (!skill) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown prompt "${request.params.name}". Call prompts/list for Cairn's prompts: ${SKILLS.map((s) => s.name).join(", ")}.`,
      );
    }
    const message = request.params.arguments?.request;
    if (skill.requestRequired && !message?.trim()) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `The "${skill.name}" prompt needs the argument "request": the user's message.`,
      );
    }
    return {
      description: skill.description,
      messages: [
        { role: "user", content: { type: "text", text: renderSkillPrompt(skill, message) } },
      ],
    };
  });
}
