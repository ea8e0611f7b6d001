import { currentUser, signedOutAnswer } from "@/lib/auth/session";
import { fullValueQuery } from "@/lib/services/views/full-values";
import { views } from "@/lib/web/views";

/**
 * One long value of a plan in full (a proposal, a step's result, an audit
 * payload…), behind the pages' "Show all" links; the signed-in user's own
 * tenant only. Shown as text, never as HTML: the value is the agent's.
 */
export async function GET(request: Request, { params }: { params: Promise<{ planId: string }> }) {
  const user = await currentUser();
  if (!user) return signedOutAnswer(request, "Sign in to see this value.");
  const { planId } = await params;
  const query = fullValueQuery.safeParse(Object.fromEntries(new URL(request.url).searchParams));
  if (!query.success) return new Response("Not found.", { status: 404 });
  const value = await views.fullValue(user, planId, query.data);
  if (!value) return new Response("Not found.", { status: 404 });
  return new Response(value.text, {
    headers: {
      "Content-Type": `${value.json ? "application/json" : "text/plain"}; charset=utf-8`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
    },
  });
}
