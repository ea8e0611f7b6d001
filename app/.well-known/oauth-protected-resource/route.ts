// RFC 9728 metadata of /api/mcp, at the root form (and, in api/mcp/, the path-suffixed one).
import { OPTIONS, protectedResourceMetadataRoute } from "@/lib/oauth/routes";

export const runtime = "nodejs";
export const dynamic = "force-dynamic";

export { OPTIONS, protectedResourceMetadataRoute as GET };
