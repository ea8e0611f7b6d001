import { currentUser } from "@/lib/auth/session";
import { artifactPartInput } from "@/lib/services/views/library-views";
import { views } from "@/lib/web/views";

/**
 * An artifact's text or content in full, behind its page's "Show all" links
 * (the page shows each shortened); the signed-in user's own tenant only. Shown
 * as text, never as HTML: the value is the agent's.
 */
export async function GET(
  request: Request,
  { params }: { params: Promise<{ artifactId: string }> },
) {
  const user = await currentUser();
  if (!user) return new Response("Sign in to see this value.", { status: 401 });
  const { artifactId } = await params;
  const query = artifactPartInput.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success) return new Response("Not found.", { status: 404 });
  const value = await views.artifactPart(user, artifactId, query.data);
  if (value === undefined) return new Response("Not found.", { status: 404 });
  return new Response(value, {
    headers: {
      "Content-Type": `${query.data.part === "content" ? "application/json" : "text/plain"}; charset=utf-8`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
    },
  });
}
