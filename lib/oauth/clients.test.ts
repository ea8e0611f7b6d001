/**
 * What Cairn accepts as a client's metadata (registration and metadata
 * documents alike), and which addresses a metadata document may be fetched
 * from. The HTTP side of both is in tests/oauth.test.ts.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { isNonPublicAddress } from "../http/non-public-address";
import { ClientMetadataError, checkClientMetadata } from "./clients";
import { fetchDocument } from "./fetch-document";

function refusal(input: unknown): string {
  try {
    checkClientMetadata(input);
  } catch (error) {
    if (error instanceof ClientMetadataError) return error.error;
    throw error;
  }
  return "accepted";
}

describe("client metadata", () => {
  it("accepts public clients with https, loopback http and reverse-domain redirect URIs", () => {
    for (const uri of [
      "https://claude.ai/api/mcp/auth_callback",
      "http://127.0.0.1:33418/callback",
      "http://localhost:6274/oauth/callback",
      "http://[::1]:8080/cb",
      "com.example.app:/oauth2redirect",
    ]) {
      expect(refusal({ redirect_uris: [uri] }), uri).toBe("accepted");
    }
    expect(
      refusal({
        redirect_uris: ["https://a.example/cb"],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
      }),
    ).toBe("accepted");
  });

  it("refuses confidential clients, other grants and redirect URIs it cannot trust", () => {
    const cases: [unknown, string][] = [
      [{}, "invalid_client_metadata"],
      [{ redirect_uris: "https://a.example/cb" }, "invalid_client_metadata"],
      [{ redirect_uris: Array(11).fill("https://a.example/cb") }, "invalid_client_metadata"],
      [
        { redirect_uris: ["https://a.example/cb"], client_name: "x".repeat(201) },
        "invalid_client_metadata",
      ],
      [
        {
          redirect_uris: ["https://a.example/cb"],
          token_endpoint_auth_method: "client_secret_post",
        },
        "invalid_client_metadata",
      ],
      [
        { redirect_uris: ["https://a.example/cb"], grant_types: ["implicit"] },
        "invalid_client_metadata",
      ],
      [
        { redirect_uris: ["https://a.example/cb"], response_types: ["token"] },
        "invalid_client_metadata",
      ],
      [{ redirect_uris: ["http://a.example/cb"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["https://a.example/cb#frag"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["data:text/html,hi"] }, "invalid_redirect_uri"],
      [{ redirect_uris: ["/relative"] }, "invalid_redirect_uri"],
    ];
    for (const [input, error] of cases) {
      expect(refusal(input), JSON.stringify(input).slice(0, 80)).toBe(error);
    }
  });

  it("holds an application_type to the redirect URIs it allows, and derives one that is missing", () => {
    const typeOf = (input: unknown) => checkClientMetadata(input).application_type;
    // Sent: kept when the redirect URIs fit it.
    expect(typeOf({ application_type: "web", redirect_uris: ["https://claude.ai/cb"] })).toBe(
      "web",
    );
    for (const uri of [
      "http://127.0.0.1:33418/callback",
      "com.example.app:/oauth2redirect",
      "https://app.example/claimed",
    ]) {
      expect(typeOf({ application_type: "native", redirect_uris: [uri] }), uri).toBe("native");
    }
    // A web application never redirects to the user's own machine or an app scheme.
    for (const uri of ["http://localhost:6274/cb", "https://localhost/cb", "com.example.app:/cb"]) {
      expect(refusal({ application_type: "web", redirect_uris: [uri] }), uri).toBe(
        "invalid_redirect_uri",
      );
    }
    expect(refusal({ application_type: "desktop", redirect_uris: ["https://a.example/cb"] })).toBe(
      "invalid_client_metadata",
    );
    // Missing (2025-era clients): what the redirect URIs say, never a refusal.
    expect(typeOf({ redirect_uris: ["http://127.0.0.1:1/cb"] })).toBe("native");
    expect(typeOf({ redirect_uris: ["https://claude.ai/cb"] })).toBe("web");
  });
});

describe("metadata document addresses", () => {
  it("tells public addresses from private, loopback, link-local and mapped ones", () => {
    for (const address of [
      "127.0.0.1",
      "10.0.0.1",
      "172.16.5.4",
      "192.168.1.1",
      "169.254.169.254",
      "100.64.0.1",
      "0.0.0.0",
      "::1",
      "::",
      "fd00::1",
      "fe80::1",
      "::ffff:127.0.0.1",
      "::ffff:10.0.0.1",
      "not an address",
    ]) {
      expect(isNonPublicAddress(address), address).toBe(true);
    }
    for (const address of ["1.1.1.1", "93.184.216.34", "2606:4700:4700::1111"]) {
      expect(isNonPublicAddress(address), address).toBe(false);
    }
  });

  it("refuses a loopback server unless loopback is allowed, and then reads it", async () => {
    const server = createServer((_request, response) => response.end('{"ok":true}'));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/client.json`);
    const byName = new URL(url.href.replace("127.0.0.1", "localhost"));
    try {
      await expect(fetchDocument(url, { allowLoopback: false })).rejects.toThrow(
        /private or loopback address/,
      );
      // A name is checked by what it resolves to, at connect time.
      await expect(fetchDocument(byName, { allowLoopback: false })).rejects.toThrow(
        /resolves to a private or loopback address/,
      );
      await expect(fetchDocument(url, { allowLoopback: true })).resolves.toBe('{"ok":true}');
    } finally {
      server.close();
    }
  });
});
