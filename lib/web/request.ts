/** What the web door reads from the request itself: the client's address, and whether its Host is ours. */
import "server-only";
import { headers } from "next/headers";
import { clientAddressOf } from "../auth/client-address";
import { env } from "../env";
import { allowedOrigins, isAllowedHost } from "../http/allowed-host";

/** The client's address for attempt limits (lib/auth/client-address.ts explains how it is found). */
export async function requestClientAddress(): Promise<string> {
  return clientAddressOf(await headers(), env().CAIRN_TRUST_PROXY);
}

/**
 * The request's Host when it is not one of this server's names (loopback, or a
 * host of CAIRN_ALLOWED_ORIGINS: lib/http/allowed-host.ts), the same rule as the
 * MCP route's. Undefined when the Host is allowed.
 */
export async function foreignHost(): Promise<string | undefined> {
  const host = (await headers()).get("host");
  if (host === null) return "(none)";
  return isAllowedHost(host, allowedOrigins()) ? undefined : host;
}
