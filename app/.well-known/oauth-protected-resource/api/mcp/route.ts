import { OPTIONS, protectedResourceMetadataRoute } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { OPTIONS, protectedResourceMetadataRoute as GET };
