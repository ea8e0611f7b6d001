/**
 * The OAuth routes' handlers, shared by the /api/oauth/* paths and the root
 * /token, /register that some clients build from the server's origin instead
 * of reading the metadata. Each answers browser-based clients too (CORS).
 */
import { getDb } from "../db/client";
import {
  authorizationServerMetadata,
  corsPreflight,
  jsonResponse,
  protectedResourceMetadata,
  publicOrigin,
  unknownHost,
} from "./config";
import { registrationEndpoint, revocationEndpoint, tokenEndpoint } from "./endpoints";

export const OPTIONS = async () => corsPreflight();

export async function protectedResourceMetadataRoute(request: Request) {
  const origin = publicOrigin(request.headers, request.url);
  return origin ? jsonResponse(protectedResourceMetadata(origin)) : unknownHost();
}

export async function authorizationServerMetadataRoute(request: Request) {
  const origin = publicOrigin(request.headers, request.url);
  return origin ? jsonResponse(authorizationServerMetadata(origin)) : unknownHost();
}

export async function tokenRoute(request: Request) {
  const origin = publicOrigin(request.headers, request.url);
  if (!origin) return unknownHost();
  return tokenEndpoint(await getDb(), origin, request);
}

export async function registerRoute(request: Request) {
  if (!publicOrigin(request.headers, request.url)) return unknownHost();
  return registrationEndpoint(await getDb(), request);
}

export async function revokeRoute(request: Request) {
  if (!publicOrigin(request.headers, request.url)) return unknownHost();
  return revocationEndpoint(await getDb(), request);
}
