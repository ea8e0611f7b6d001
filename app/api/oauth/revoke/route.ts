import { OPTIONS, revokeRoute } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { OPTIONS, revokeRoute as POST };
