import { OPTIONS, registerRoute } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { OPTIONS, registerRoute as POST };
