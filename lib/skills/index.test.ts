import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { codeNames, docTable } from "../docs-table";
import { fetchedSkill, getSkill, renderSkillPrompt, SKILL_NAMES, SKILLS, skillFile } from "./index";

describe("the research skills", () => {
  it("loads every skill with its front matter, title and request marker", () => {
    expect(SKILLS.map((s) => s.name)).toEqual([...SKILL_NAMES]);
    for (const skill of SKILLS) {
      expect(skill.file.startsWith(`---\nname: ${skill.name}\ndescription: `), skill.name).toBe(
        true,
      );
      expect(skill.description.length, skill.name).toBeGreaterThan(80);
      expect(skill.title, skill.name).toMatch(/^Research/);
      expect(skill.body.startsWith("# "), skill.name).toBe(true);
      expect(skill.file).toBe(readFileSync(`skills/${skill.name}.md`, "utf8"));
    }
  });

  it("finds skills by name only", () => {
    expect(getSkill("research-deep")?.name).toBe("research-deep");
    for (const name of ["", "Research", "../package", "toString", "constructor"]) {
      expect(getSkill(name), name).toBeUndefined();
    }
  });

  it("fences the user's message in the prompt, which carries its own skill only", () => {
    const scan = getSkill("research-scan");
    if (!scan) throw new Error("no scan skill");
    const text = renderSkillPrompt(scan, "  Quick: is rust faster than go?  ");
    expect(text).toContain("<user_request>\nQuick: is rust faster than go?\n</user_request>");
    expect(text).not.toContain("{{request}}");
    expect(text).not.toContain("# Research output");
    expect(text).toContain('get_skill({ "name": "research-output" })');
  });

  it("keeps every prompt under about 4k tokens (4 characters a token), with a long request", () => {
    const request = "Compare pgvector, Qdrant and Pinecone for our RAG product. ".repeat(8);
    for (const skill of SKILLS) {
      expect(renderSkillPrompt(skill, request).length, skill.name).toBeLessThanOrEqual(16_000);
      expect(fetchedSkill(skill.name).text.length, skill.name).toBeLessThanOrEqual(16_000);
    }
  });

  it("hands the whole of every skill out through get_skill: the parts together are the files", () => {
    const router = renderSkillPrompt(SKILLS[0] as (typeof SKILLS)[number], "q");
    for (const next of ["research-scan", "research-deep", "research-output"]) {
      expect(router, next).toContain(`get_skill({ "name": "${next}" })`);
    }
    expect(fetchedSkill("research-deep").text).toContain(
      'get_skill({ "name": "research-deep-loop" })',
    );
    for (const skill of SKILLS) {
      const fetched = fetchedSkill(skill.name);
      expect(fetched.title).toBe(skill.title);
      expect(fetched.text).not.toContain("{{request}}");
      expect(
        fetched.text.replace(/The user's research request, as given[^\n]*/, "{{request}}"),
      ).toBe(skill.body);
    }
  });

  it("asks for the request when a prompt came without one", () => {
    const output = getSkill("research-output");
    if (!output) throw new Error("no output skill");
    expect(renderSkillPrompt(output, undefined)).toContain("ask the user");
    expect(renderSkillPrompt(output, "   ")).toContain("ask the user");
  });

  it("writes the download file without a placeholder", () => {
    for (const skill of SKILLS) {
      const file = skillFile(skill);
      expect(file).not.toContain("{{request}}");
      expect(file).toContain("The user's message that invoked this skill");
    }
  });
});

describe("docs/protocol.md's table of prompts", () => {
  it("gives each skill's prompt, once, in order", () => {
    const prompts = docTable("docs/protocol.md", "prompt").map(([name = ""]) =>
      codeNames(name).join(),
    );
    expect(prompts).toEqual([...SKILL_NAMES]);
  });
});
