import { OPTIONS, tokenRoute } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { OPTIONS, tokenRoute as POST };
