// The same metadata for clients that try OpenID discovery first (Cairn issues no ID tokens).
import { authorizationServerMetadataRoute, OPTIONS } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { authorizationServerMetadataRoute as GET, OPTIONS };
