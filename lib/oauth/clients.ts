/**
 * OAuth clients: Dynamic Client Registration (RFC 7591) and Client ID Metadata
 * Documents (client_id is the HTTPS URL of the client's metadata). Both end up
 * as an oauth_client row, so several app instances share them; a metadata
 * document's copy is used until it expires, then fetched again.
 *
 * Every client is public: token_endpoint_auth_method "none", PKCE instead of a
 * secret, and only the authorization_code and refresh_token grants.
 */
import { randomBytes } from "node:crypto";
import { and, count, eq, gt, isNotNull, lt, notExists, or, sql } from "drizzle-orm";
import { z } from "zod";
import type { Database } from "../db/client";
import { oauthAuthorizationCodes, oauthClients, oauthGrants } from "../db/schema";
import { logWarning } from "../log";
import { registerAttempt, tryAgainIn } from "../services/accounts/attempt-limits";
import { unstorableText } from "../services/shared/validation";
import { fetchDocument } from "./fetch-document";

/** How long a fetched metadata document is used before it is fetched again. */
const DOCUMENT_CACHE_SECONDS = 3600;
/**
 * How long a metadata document that could not be used is refused without
 * fetching it again: /authorize needs no credential, so each request would
 * otherwise make Cairn fetch (and wait up to the time limit) once more.
 */
const FAILED_DOCUMENT_CACHE_SECONDS = 300;
/**
 * At most this many refusals are remembered at once (each for
 * FAILED_DOCUMENT_CACHE_SECONDS, then deleteStaleClients drops it): past it a
 * refusal is answered without being stored, so distinct failing client_ids
 * cannot fill the table. Every fetch also counts against its caller's address
 * (the `oauth_metadata_document_address` attempt limit).
 */
const MAX_REMEMBERED_REFUSALS = 1000;
/** What a person or client reads when a document cannot be fetched; the reason goes to the server log. */
const UNREACHABLE = "the address of its metadata document is not allowed or could not be reached";
/**
 * A self-registered client that no person connected within this long is
 * deleted (deleteStaleClients): registration is open to anyone, so unused
 * registrations must not pile up. A day leaves a platform ample time between
 * registering and sending the person to the consent page.
 */
export const UNUSED_CLIENT_SECONDS = 24 * 3600;
const MAX_REDIRECT_URIS = 10;

export type OAuthClient = {
  /** The row's id. */
  id: string;
  clientId: string;
  kind: "registered" | "metadata_document";
  /** Unverified: whatever the client calls itself. */
  clientName: string | null;
  redirectUris: string[];
};

/** A client's metadata that Cairn refuses, with the reason (RFC 7591 invalid_client_metadata / invalid_redirect_uri). */
export class ClientMetadataError extends Error {
  override name = "ClientMetadataError";
  constructor(
    readonly error: "invalid_client_metadata" | "invalid_redirect_uri" | "invalid_client",
    message: string,
  ) {
    super(message);
  }
}

const LOOPBACK_REDIRECT_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * A redirect URI Cairn will send codes to: https anywhere, http only to the
 * client's own machine (RFC 8252 §7.3), or a private-use scheme of a native app
 * named after a domain (`com.example.app:/callback`, RFC 8252 §7.1). No
 * fragments; javascript:, data: and friends are refused.
 */
function checkRedirectUri(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ClientMetadataError("invalid_redirect_uri", `${value} is not an absolute URI`);
  }
  if (url.hash) {
    throw new ClientMetadataError("invalid_redirect_uri", `${value} has a fragment`);
  }
  const scheme = url.protocol.slice(0, -1);
  const ok =
    scheme === "https" ||
    (scheme === "http" && LOOPBACK_REDIRECT_HOSTS.has(url.hostname)) ||
    (scheme.includes(".") && /^[a-z][a-z0-9+.-]*$/.test(scheme));
  if (!ok) {
    throw new ClientMetadataError(
      "invalid_redirect_uri",
      `${value}: redirect URIs must be https, http on a loopback address, or a reverse-domain app scheme`,
    );
  }
  return value;
}

/** Text PostgreSQL can store: no NUL, no unpaired surrogate. */
const storable = (max: number) =>
  z
    .string()
    .max(max)
    .refine((text) => !unstorableText(text), "contains a NUL or an unpaired surrogate");

const metadataSchema = z.object({
  redirect_uris: z.array(storable(2000)).min(1).max(MAX_REDIRECT_URIS),
  application_type: z.enum(["native", "web"]).optional(),
  client_name: storable(200).optional(),
  token_endpoint_auth_method: z.string().optional(),
  grant_types: z.array(z.string()).optional(),
  response_types: z.array(z.string()).optional(),
});

type ClientMetadata = z.infer<typeof metadataSchema>;
type ApplicationType = "native" | "web";

/** A redirect URI on the client's own machine or an app's own scheme: a native app's. */
function isNativeRedirect(value: string): boolean {
  const url = new URL(value);
  return url.protocol !== "https:" || LOOPBACK_REDIRECT_HOSTS.has(url.hostname);
}

/**
 * The client's OpenID Connect `application_type`, which revision 2026-07-28
 * has MCP clients send at registration, held to the redirect URIs that type
 * allows (OIDC Dynamic Client Registration §2): a web app's are https on a
 * host other than the user's own machine; a native app's are loopback http,
 * its own scheme, or https it has claimed (RFC 8252 §7). A client that sends
 * none (the 2025-era ones) is not refused: its redirect URIs say which it is.
 */
function applicationTypeOf(metadata: ClientMetadata): ApplicationType {
  const native = metadata.redirect_uris.filter(isNativeRedirect);
  if (metadata.application_type === "web" && native.length > 0) {
    throw new ClientMetadataError(
      "invalid_redirect_uri",
      `${native[0]}: a web application's redirect URIs must be https on a host other than localhost; register as application_type "native"`,
    );
  }
  return metadata.application_type ?? (native.length > 0 ? "native" : "web");
}

export function checkClientMetadata(
  input: unknown,
): ClientMetadata & { redirect_uris: string[]; application_type: ApplicationType } {
  const parsed = metadataSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ClientMetadataError(
      "invalid_client_metadata",
      `${issue?.path.join(".") || "metadata"}: ${issue?.message ?? "invalid"}`,
    );
  }
  const metadata = parsed.data;
  if ((metadata.token_endpoint_auth_method ?? "none") !== "none") {
    throw new ClientMetadataError(
      "invalid_client_metadata",
      'token_endpoint_auth_method must be "none": Cairn registers public clients only (PKCE, no secret)',
    );
  }
  const badGrant = metadata.grant_types?.find(
    (grant) => grant !== "authorization_code" && grant !== "refresh_token",
  );
  if (badGrant) {
    throw new ClientMetadataError(
      "invalid_client_metadata",
      `grant type ${badGrant} is not supported (only authorization_code and refresh_token)`,
    );
  }
  const badResponse = metadata.response_types?.find((type) => type !== "code");
  if (badResponse) {
    throw new ClientMetadataError(
      "invalid_client_metadata",
      `response type ${badResponse} is not supported (only code)`,
    );
  }
  metadata.redirect_uris.forEach(checkRedirectUri);
  return { ...metadata, application_type: applicationTypeOf(metadata) };
}

function toClient(row: typeof oauthClients.$inferSelect): OAuthClient {
  return {
    id: row.id,
    clientId: row.clientId,
    kind: row.kind,
    clientName: row.clientName,
    redirectUris: row.redirectUris,
  };
}

/**
 * RFC 7591 registration: the stored client with its application type (sent or
 * derived, for the answer), or ClientMetadataError.
 */
export async function registerClient(
  db: Database,
  input: unknown,
): Promise<OAuthClient & { applicationType: ApplicationType }> {
  const metadata = checkClientMetadata(input);
  const [row] = await db
    .insert(oauthClients)
    .values({
      clientId: `cairn_client_${randomBytes(16).toString("base64url")}`,
      kind: "registered",
      clientName: metadata.client_name ?? null,
      redirectUris: metadata.redirect_uris,
    })
    .returning();
  if (!row) throw new Error("the client was not stored");
  return { ...toClient(row), applicationType: metadata.application_type };
}

/** Whether a client_id is a metadata document's URL (rather than a registered id). */
function isMetadataDocumentUrl(clientId: string): boolean {
  return clientId.startsWith("https://") || clientId.startsWith("http://");
}

function documentUrl(clientId: string, allowLoopback: boolean): URL {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    throw new ClientMetadataError("invalid_client", "client_id is not a valid URL");
  }
  const loopbackHttp =
    allowLoopback && url.protocol === "http:" && LOOPBACK_REDIRECT_HOSTS.has(url.hostname);
  if (url.protocol !== "https:" && !loopbackHttp) {
    throw new ClientMetadataError("invalid_client", "a client_id URL must be https");
  }
  if (url.pathname === "/" || url.hash || url.username || url.password) {
    throw new ClientMetadataError(
      "invalid_client",
      "a client_id URL needs a path and no fragment or credentials",
    );
  }
  return url;
}

/** The metadata document at a client_id URL, fetched and checked; ClientMetadataError when refused. */
async function fetchMetadataDocument(
  url: URL,
  clientId: string,
  allowLoopback: boolean,
): Promise<ClientMetadata & { redirect_uris: string[] }> {
  let text: string;
  try {
    text = await fetchDocument(url, { allowLoopback });
  } catch (error) {
    // Whether a name resolves, to which address, or what a server answered
    // would map networks for whoever asks: only the log says.
    logWarning(`Client metadata document ${clientId} could not be fetched`, error);
    throw new ClientMetadataError("invalid_client", UNREACHABLE);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new ClientMetadataError("invalid_client", "client metadata document is not JSON");
  }
  if ((json as { client_id?: unknown } | null)?.client_id !== clientId) {
    throw new ClientMetadataError(
      "invalid_client",
      "client metadata document's client_id is not its own URL",
    );
  }
  try {
    return checkClientMetadata(json);
  } catch (error) {
    if (error instanceof ClientMetadataError) {
      throw new ClientMetadataError("invalid_client", `client metadata document: ${error.message}`);
    }
    throw error;
  }
}

/**
 * The client a client_id names: a registered one, or a metadata document's
 * (fetched, checked and cached when missing or expired; each fetch counted
 * against the caller's address). Undefined for an unknown registered id;
 * ClientMetadataError for a document Cairn refuses or may not fetch now.
 */
export async function resolveClient(
  db: Database,
  clientId: string,
  options: { allowLoopback: boolean; address: string },
): Promise<OAuthClient | undefined> {
  // A NUL cannot even be compared by PostgreSQL: such an id names no client.
  if (clientId.length > 2000 || unstorableText(clientId)) return undefined;
  const [row] = await db.select().from(oauthClients).where(eq(oauthClients.clientId, clientId));
  if (row && (row.kind === "registered" || (row.expiresAt && row.expiresAt > new Date()))) {
    if (row.fetchError) throw new ClientMetadataError("invalid_client", row.fetchError);
    return toClient(row);
  }
  if (!isMetadataDocumentUrl(clientId)) return undefined;

  // A malformed URL is refused without a fetch, so it is not remembered either.
  const url = documentUrl(clientId, options.allowLoopback);
  // Anyone may name any URL here without signing in: like registrations,
  // fetches are limited per address, and a refused one is not remembered.
  const gate = await registerAttempt(db, [
    { kind: "oauth_metadata_document_address", key: options.address },
  ]);
  if (!gate.allowed) {
    throw new ClientMetadataError(
      "invalid_client",
      `too many client metadata documents were fetched for this address. ${tryAgainIn(gate.retryAt)}`,
    );
  }
  let metadata: ClientMetadata & { redirect_uris: string[] };
  try {
    metadata = await fetchMetadataDocument(url, clientId, options.allowLoopback);
  } catch (error) {
    if (error instanceof ClientMetadataError) await rememberRefusal(db, clientId, error);
    throw error;
  }
  return toClient(await storeDocument(db, clientId, { metadata }));
}

/** Keeps a refusal for its cache time, unless MAX_REMEMBERED_REFUSALS are kept already. */
async function rememberRefusal(db: Database, clientId: string, error: ClientMetadataError) {
  const [kept] = await db
    .select({ count: count() })
    .from(oauthClients)
    .where(and(isNotNull(oauthClients.fetchError), gt(oauthClients.expiresAt, new Date())));
  if ((kept?.count ?? 0) >= MAX_REMEMBERED_REFUSALS) return;
  await storeDocument(db, clientId, { error });
}

/** Keeps a metadata document's copy, or the reason it was refused, for its cache time. */
async function storeDocument(
  db: Database,
  clientId: string,
  outcome:
    | { metadata: ClientMetadata & { redirect_uris: string[] } }
    | { error: ClientMetadataError },
) {
  const now = new Date();
  const failed = "error" in outcome;
  const values = {
    clientName: failed ? null : (outcome.metadata.client_name ?? null),
    redirectUris: failed ? [] : outcome.metadata.redirect_uris,
    fetchError: failed ? outcome.error.message : null,
    fetchedAt: now,
    expiresAt: new Date(
      now.getTime() + (failed ? FAILED_DOCUMENT_CACHE_SECONDS : DOCUMENT_CACHE_SECONDS) * 1000,
    ),
  };
  const [stored] = await db
    .insert(oauthClients)
    .values({ clientId, kind: "metadata_document", ...values })
    .onConflictDoUpdate({ target: oauthClients.clientId, set: values })
    .returning();
  if (!stored) throw new Error("the client metadata document was not stored");
  return stored;
}

/**
 * Deletes the clients nobody connected with: self-registered ones older than
 * UNUSED_CLIENT_SECONDS, and metadata documents' copies (or remembered
 * refusals) past their cache time, in both cases only when no connected app
 * (oauth_grant, even a revoked one: the audit names it) and no unexpired
 * authorization code refers to them. Run by
 * every instance's scheduler tick (lib/startup.ts); returns how many went.
 */
export async function deleteStaleClients(db: Database, now: Date): Promise<number> {
  const registeredBefore = new Date(now.getTime() - UNUSED_CLIENT_SECONDS * 1000);
  const deleted = await db
    .delete(oauthClients)
    .where(
      and(
        or(
          and(eq(oauthClients.kind, "registered"), lt(oauthClients.createdAt, registeredBefore)),
          and(
            eq(oauthClients.kind, "metadata_document"),
            isNotNull(oauthClients.expiresAt),
            lt(oauthClients.expiresAt, now),
          ),
        ),
        notExists(
          db
            .select({ one: sql`1` })
            .from(oauthGrants)
            .where(eq(oauthGrants.clientId, oauthClients.id)),
        ),
        // A code just issued is about to become a connected app: its client stays.
        notExists(
          db
            .select({ one: sql`1` })
            .from(oauthAuthorizationCodes)
            .where(
              and(
                eq(oauthAuthorizationCodes.clientId, oauthClients.id),
                gt(oauthAuthorizationCodes.expiresAt, now),
              ),
            ),
        ),
      ),
    )
    .returning({ id: oauthClients.id });
  return deleted.length;
}
