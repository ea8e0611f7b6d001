/**
 * The OAuth routes' handlers, shared by the /api/oauth/* paths and the root
 * /token, /register that some clients build from the server's origin instead
 * of reading the metadata. Each answers browser-based clients too (CORS).
 */
import { getDb } from "../db/client";
import { logUnexpected } from "../log";
import {
  authorizationServerMetadata,
  corsPreflight,
  jsonResponse,
  oauthError,
  protectedResourceMetadata,
  publicOrigin,
  unknownHost,
} from "./config";
import { registrationEndpoint, revocationEndpoint, tokenEndpoint } from "./endpoints";

export const OPTIONS = async () => corsPreflight();

export async function protectedResourceMetadataRoute(request: Request) {
  const origin = publicOrigin(request.headers);
  return origin ? jsonResponse(protectedResourceMetadata(origin)) : unknownHost();
}

export async function authorizationServerMetadataRoute(request: Request) {
  const origin = publicOrigin(request.headers);
  return origin ? jsonResponse(authorizationServerMetadata(origin)) : unknownHost();
}

/**
 * An unexpected failure is logged here, the Cairn way (lib/log.ts: no failed
 * statement's values), and answered as OAuth's server_error, rather than left
 * to the framework, which would log the error whole.
 */
function guarded(handler: (request: Request) => Promise<Response>) {
  return async (request: Request) => {
    try {
      return await handler(request);
    } catch (error) {
      logUnexpected("Unexpected error at an OAuth endpoint", error);
      return oauthError(500, "server_error", "Cairn could not answer this request; try again.");
    }
  };
}

export const tokenRoute = guarded(async (request) => {
  const origin = publicOrigin(request.headers);
  if (!origin) return unknownHost();
  return tokenEndpoint(await getDb(), origin, request);
});

export const registerRoute = guarded(async (request) => {
  if (!publicOrigin(request.headers)) return unknownHost();
  return registrationEndpoint(await getDb(), request);
});

export const revokeRoute = guarded(async (request) => {
  if (!publicOrigin(request.headers)) return unknownHost();
  return revocationEndpoint(await getDb(), request);
});
