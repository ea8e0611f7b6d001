import { currentUser, signedOutAnswer } from "@/lib/auth/session";
import { views } from "@/lib/web/views";

/** The plan's sources (with their content digests) and claims as JSON, for the signed-in user's own tenant only. */
export async function GET(request: Request, { params }: { params: Promise<{ planId: string }> }) {
  const user = await currentUser();
  if (!user) return signedOutAnswer(request, "Sign in to export evidence.");
  const { planId } = await params;
  const evidence = await views.evidenceExport(user, planId);
  if (!evidence) return new Response("Not found.", { status: 404 });
  return new Response(JSON.stringify(evidence, null, 2), {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="evidence-${evidence.planId}.json"`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
    },
  });
}
