/**
 * GET /skills/<name>: a research skill as a Markdown file, for AI clients that
 * load skills from disk rather than through MCP prompts. Public on purpose: the
 * skills are instructions, with no account data. Only names from the skills
 * list are served, so the route reads nothing but those files.
 */
import { getSkill, skillFile } from "@/lib/skills";

export const runtime = "nodejs";

export async function GET(_request: Request, { params }: { params: Promise<{ name: string }> }) {
  const { name } = await params;
  const skill = getSkill(name.replace(/\.md$/, ""));
  if (!skill) {
    return new Response(`No skill named "${name}".\n`, {
      status: 404,
      headers: { "Content-Type": "text/plain; charset=utf-8" },
    });
  }
  return new Response(skillFile(skill), {
    headers: {
      "Content-Type": "text/markdown; charset=utf-8",
      "Content-Disposition": `attachment; filename="${skill.name}.md"`,
      // The files change only with a new release of Cairn.
      "Cache-Control": "public, max-age=300",
    },
  });
}
