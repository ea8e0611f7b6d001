/**
 * Cairn's research skills: the instructions that drive the six-phase lifecycle
 * of docs/execution-flow.md on the AI platform's side. Their text lives as Markdown
 * in the top-level `skills/` folder, versioned with the code whose tool and
 * field names it uses, and is read once when this module loads.
 *
 * Two ways out: MCP prompts (lib/mcp/prompts.ts), where the user's message is
 * put in as the `request` argument, and skill files downloaded from
 * /skills/<name> for clients that load skills from disk.
 *
 * An MCP prompt cannot fetch another prompt, so a prompt carries the skills it
 * hands over to (the router needs scan, deep and output); a downloaded file is
 * one skill, since a disk client loads them all.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const SKILL_NAMES = [
  "research",
  "research-scan",
  "research-deep",
  "research-output",
] as const;
export type SkillName = (typeof SKILL_NAMES)[number];

export const SKILLS_FOLDER = join(process.cwd(), "skills");

/** Where the user's message goes in a skill's text. */
const REQUEST_MARKER = "{{request}}";

/** What a downloaded file says in place of the message, which a disk client has in the conversation. */
const DISK_REQUEST =
  "The user's message that invoked this skill, as it stands in your conversation.";

export type Skill = {
  name: SkillName;
  /** The first heading of the file. */
  title: string;
  /** The `description` of the file's front matter: when to use the skill. */
  description: string;
  /** The description of the prompt's `request` argument. */
  requestDescription: string;
  requestRequired: boolean;
  /** The whole file, front matter included, as stored in the repository. */
  file: string;
  /** The file without its front matter. */
  body: string;
  /** Skills this one hands over to, which its prompt carries along. */
  handsOverTo: readonly SkillName[];
};

const HANDOVERS: Record<SkillName, readonly SkillName[]> = {
  research: ["research-scan", "research-deep", "research-output"],
  "research-scan": ["research-output"],
  "research-deep": ["research-output"],
  "research-output": [],
};

const REQUEST_DESCRIPTIONS: Record<SkillName, string> = {
  research: "The user's research request, in their own words.",
  "research-scan": "The user's research request, in their own words.",
  "research-deep": "The user's research request, in their own words.",
  "research-output":
    "The user's message, or the planId of the completed plan whose deliverable to produce.",
};

function parse(name: SkillName, file: string): Skill {
  const match = /^---\n([\s\S]*?)\n---\n([\s\S]*)$/.exec(file);
  if (!match?.[1] || match[2] === undefined) {
    throw new Error(
      `skills/${name}.md must start with front matter (---, name, description, ---).`,
    );
  }
  const fields = new Map(
    match[1]
      .split("\n")
      .filter((line) => line.includes(":"))
      .map((line) => {
        const at = line.indexOf(":");
        return [line.slice(0, at).trim(), line.slice(at + 1).trim()] as const;
      }),
  );
  const body = match[2].trimStart();
  const title = /^# (.+)$/m.exec(body)?.[1];
  const description = fields.get("description");
  if (fields.get("name") !== name || !description || !title) {
    throw new Error(`skills/${name}.md needs name: ${name}, a description and a # heading.`);
  }
  if (!body.includes(REQUEST_MARKER)) {
    throw new Error(`skills/${name}.md must say where the request goes (${REQUEST_MARKER}).`);
  }
  return {
    name,
    title,
    description,
    requestDescription: REQUEST_DESCRIPTIONS[name],
    requestRequired: name !== "research-output",
    file,
    body,
    handsOverTo: HANDOVERS[name],
  };
}

export const SKILLS: readonly Skill[] = SKILL_NAMES.map((name) =>
  parse(name, readFileSync(join(SKILLS_FOLDER, `${name}.md`), "utf8")),
);

const BY_NAME = new Map<string, Skill>(SKILLS.map((skill) => [skill.name, skill]));

export function getSkill(name: string): Skill | undefined {
  return BY_NAME.get(name);
}

/**
 * The text of a skill's MCP prompt: its body with the user's message put in,
 * then the bodies of the skills it hands over to. The message is fenced so the
 * model reads it as the user's words, not as more instructions from Cairn.
 */
export function renderSkillPrompt(skill: Skill, request: string | undefined): string {
  const message = request?.trim()
    ? `<user_request>\n${request.trim()}\n</user_request>`
    : "(No message was given with this prompt: ask the user what they want researched.)";
  const parts = [skill.body.replaceAll(REQUEST_MARKER, message)];
  for (const next of skill.handsOverTo) {
    const handover = BY_NAME.get(next);
    if (handover) {
      parts.push(
        `---\n\n<!-- The "${next}" skill, included because this one hands over to it. -->\n\n${handover.body.replaceAll(REQUEST_MARKER, "The same request as above.")}`,
      );
    }
  }
  return parts.join("\n\n");
}

/** The skill file for clients that load skills from disk. */
export function skillFile(skill: Skill): string {
  return skill.file.replaceAll(REQUEST_MARKER, DISK_REQUEST);
}
