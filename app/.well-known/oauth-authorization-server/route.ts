import { authorizationServerMetadataRoute, OPTIONS } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { authorizationServerMetadataRoute as GET, OPTIONS };
