/** What the web door reads from the request itself: the client's address, and whether its Host is ours. */
import "server-only";
import { headers } from "next/headers";
import { clientAddressOf } from "../auth/client-address";
import { env } from "../env";
import { isAllowedHost } from "../mcp/front-door";

/** CAIRN_ALLOWED_ORIGINS as a list. */
export function allowedOrigins(): string[] {
  return (env().CAIRN_ALLOWED_ORIGINS ?? "")
    .split(",")
    .map((origin) => origin.trim())
    .filter(Boolean);
}

/** The client's address for attempt limits (lib/auth/client-address.ts explains how it is found). */
export async function requestClientAddress(): Promise<string> {
  return clientAddressOf(await headers(), env().CAIRN_TRUST_PROXY);
}

/**
 * The request's Host when it is not one of this server's names (loopback, or a
 * host of CAIRN_ALLOWED_ORIGINS), the same rule as the MCP route's: a page on
 * another site whose name resolves to this machine (DNS rebinding) sends its own
 * name. Undefined when the Host is allowed.
 */
export async function foreignHost(): Promise<string | undefined> {
  const host = (await headers()).get("host");
  if (host === null) return "(none)";
  return isAllowedHost(host, { maxBodyBytes: 0, allowedOrigins: allowedOrigins() })
    ? undefined
    : host;
}
