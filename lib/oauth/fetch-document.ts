/**
 * Fetches a Client ID Metadata Document without letting a client_id URL turn
 * Cairn into a probe of its own network: no redirects, a time limit for the
 * whole exchange, a size limit, and every address the name resolves to checked
 * at connect time (inside the socket's own DNS lookup, so a name cannot resolve
 * to a public address for the check and a private one for the connection).
 */
import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { isLoopbackAddress, isNonPublicAddress } from "../http/non-public-address";

export const DOCUMENT_MAX_BYTES = 5 * 1024;
export const DOCUMENT_TIMEOUT_MS = 5_000;

export class DocumentFetchError extends Error {
  override name = "DocumentFetchError";
}

export type FetchDocumentOptions = {
  /** Tests and development: loopback addresses (only those) may be reached. */
  allowLoopback: boolean;
};

/** The document's JSON text; throws DocumentFetchError with a reason a person can read. */
export function fetchDocument(url: URL, options: FetchDocumentOptions): Promise<string> {
  const allowed = (address: string) =>
    !isNonPublicAddress(address) || (options.allowLoopback && isLoopbackAddress(address));
  const hostname = url.hostname.replace(/^\[|\]$/g, "");
  if (isIP(hostname) !== 0 && !allowed(hostname)) {
    return Promise.reject(
      new DocumentFetchError(`${url.hostname} is a private or loopback address`),
    );
  }

  return new Promise((resolve, reject) => {
    const client = url.protocol === "https:" ? https : http;
    const request = client.request(
      url,
      {
        method: "GET",
        headers: { Accept: "application/json" },
        lookup: (host, lookupOptions, callback) => {
          dnsLookup(host, { ...lookupOptions, all: true }, (error, addresses) => {
            if (error) return callback(error, "", 0);
            const list = addresses as LookupAddress[];
            const refused = list.find((entry) => !allowed(entry.address));
            if (refused || list.length === 0) {
              return callback(
                new DocumentFetchError(`${host} resolves to a private or loopback address`),
                "",
                0,
              );
            }
            if (lookupOptions.all) return callback(null, list as never);
            const first = list[0] as LookupAddress;
            callback(null, first.address, first.family);
          });
        },
      },
      (response) => {
        if (response.statusCode !== 200) {
          response.resume();
          reject(
            new DocumentFetchError(
              `answered HTTP ${response.statusCode}${response.statusCode && response.statusCode >= 300 && response.statusCode < 400 ? " (redirects are not followed)" : ""}`,
            ),
          );
          return;
        }
        const declared = Number(response.headers["content-length"] ?? "0");
        if (declared > DOCUMENT_MAX_BYTES) {
          response.destroy();
          reject(new DocumentFetchError(`is larger than ${DOCUMENT_MAX_BYTES} bytes`));
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        response.on("data", (chunk: Buffer) => {
          size += chunk.length;
          if (size > DOCUMENT_MAX_BYTES) {
            response.destroy();
            reject(new DocumentFetchError(`is larger than ${DOCUMENT_MAX_BYTES} bytes`));
            return;
          }
          chunks.push(chunk);
        });
        response.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
        response.on("error", (error) => reject(new DocumentFetchError(error.message)));
        // Cut off mid-body (the time limit): settles nothing if "end" came first.
        response.on("close", () => reject(new DocumentFetchError("the connection closed early")));
      },
    );
    const timer = setTimeout(() => {
      request.destroy(new DocumentFetchError(`did not answer within ${DOCUMENT_TIMEOUT_MS} ms`));
    }, DOCUMENT_TIMEOUT_MS);
    request.on("error", (error) =>
      reject(error instanceof DocumentFetchError ? error : new DocumentFetchError(error.message)),
    );
    request.on("close", () => clearTimeout(timer));
    request.end();
  });
}
