import { currentUser, signedOutAnswer } from "@/lib/auth/session";
import { downloadFileName, downloadFormat } from "@/lib/web/deliverable";
import { views } from "@/lib/web/views";

/** The plan's latest deliverable as a file, for the signed-in user's own tenant only. */
export async function GET(request: Request, { params }: { params: Promise<{ planId: string }> }) {
  const user = await currentUser();
  if (!user) return signedOutAnswer(request, "Sign in to download deliverables.");
  const { planId } = await params;
  const read = await views.planDeliverable(user, planId);
  const deliverable = read?.deliverable;
  if (!read || !deliverable) return new Response("Not found.", { status: 404 });
  const { contentType } = downloadFormat(deliverable.outputMediaType);
  const filename = downloadFileName(read.planName, deliverable.outputMediaType);
  return new Response(deliverable.content, {
    headers: {
      "Content-Type": contentType,
      "Content-Disposition": `attachment; filename="${filename}"`,
      "X-Content-Type-Options": "nosniff",
      "Cache-Control": "private, no-store",
    },
  });
}
