/**
 * The scheme a client used to reach Cairn. `next start` serves plain HTTP, and
 * Next.js builds request.url (and nextUrl) from X-Forwarded-Proto, which any
 * client can send, so neither tells. The scheme of CAIRN_PUBLIC_URL when set (a
 * TLS-terminating proxy in front), else X-Forwarded-Proto only when proxies are
 * trusted (CAIRN_TRUST_PROXY), else the socket's: http.
 */
export function requestScheme(
  forwardedProto: string | null,
  config: { publicUrl: string | undefined; trustProxy: number },
): "http" | "https" {
  if (config.publicUrl) return config.publicUrl.startsWith("https://") ? "https" : "http";
  const forwarded = forwardedProto?.split(",")[0]?.trim().toLowerCase();
  return config.trustProxy > 0 && forwarded === "https" ? "https" : "http";
}
