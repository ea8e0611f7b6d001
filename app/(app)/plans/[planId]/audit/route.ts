import { currentUser, signedOutAnswer } from "@/lib/auth/session";
import { views } from "@/lib/web/views";

/**
 * The plan's audit trail with its hash chain, as JSON, for the signed-in
 * user's own tenant only. Streamed as it is read, so a long trail is never
 * held in memory.
 */
export async function GET(request: Request, { params }: { params: Promise<{ planId: string }> }) {
  const user = await currentUser();
  if (!user) return signedOutAnswer(request, "Sign in to export audit trails.");
  const { planId } = await params;
  const trail = await views.auditExport(user, planId);
  if (!trail) return new Response("Not found.", { status: 404 });
  return new Response(trail.body, {
    headers: {
      "Content-Type": "application/json; charset=utf-8",
      "Content-Disposition": `attachment; filename="audit-${trail.planId}.json"`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
    },
  });
}
