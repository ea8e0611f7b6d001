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
 * Each skill is also what the `get_skill` tool answers: a prompt no longer
 * carries the skills it hands over to (which made the research prompt 56 KB,
 * some 14k tokens, on every prompts/get); the agent fetches the next one when
 * it gets there. Every part stays under about 4k tokens, so the deep study is
 * two: its plan (`research-deep`) and its loop (`research-deep-loop`).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const SKILL_NAMES = [
  "research",
  "research-scan",
  "research-deep",
  "research-deep-loop",
  "research-output",
] as const;
export type SkillName = (typeof SKILL_NAMES)[number];

export const SKILLS_FOLDER = join(process.cwd(), "skills");

/** Where the user's message goes in a skill's text. */
const REQUEST_MARKER = "{{request}}";

/** What a downloaded file says in place of the message, which a disk client has in the conversation. */
const DISK_REQUEST =
  "The user's message that invoked this skill, as it stands in your conversation.";

/** What a skill fetched with get_skill says in place of the message, given earlier in the conversation. */
const FETCHED_REQUEST =
  "The user's research request, as given when the research began (earlier in your conversation).";

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
};

const REQUEST_DESCRIPTIONS: Record<SkillName, string> = {
  research: "The user's research request, in their own words.",
  "research-scan": "The user's research request, in their own words.",
  "research-deep": "The user's research request, in their own words.",
  "research-deep-loop": "The user's research request, or the planId of the [Deep] plan to work on.",
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
    // The parts an agent reaches from another skill work without a message.
    requestRequired: name !== "research-output" && name !== "research-deep-loop",
    file,
    body,
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
 * fenced so the model reads it as the user's words, not as more instructions
 * from Cairn.
 */
export function renderSkillPrompt(skill: Skill, request: string | undefined): string {
  const message = request?.trim()
    ? `<user_request>\n${request.trim()}\n</user_request>`
    : "(No message was given with this prompt: ask the user what they want researched.)";
  return skill.body.replaceAll(REQUEST_MARKER, message);
}

/** Every skill by its name: SKILLS holds one for each name, or the module fails to load. */
const BY_SKILL_NAME = Object.fromEntries(SKILLS.map((skill) => [skill.name, skill])) as Record<
  SkillName,
  Skill
>;

/** What get_skill answers: the skill's body, the request being the one the research began with. */
export function fetchedSkill(name: SkillName): { name: SkillName; title: string; text: string } {
  const skill = BY_SKILL_NAME[name];
  return { name, title: skill.title, text: skill.body.replaceAll(REQUEST_MARKER, FETCHED_REQUEST) };
}

/** The skill file for clients that load skills from disk. */
export function skillFile(skill: Skill): string {
  return skill.file.replaceAll(REQUEST_MARKER, DISK_REQUEST);
}
