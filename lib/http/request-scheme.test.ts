import { describe, expect, it } from "vitest";
import { requestScheme } from "./request-scheme";

describe("requestScheme", () => {
  const plain = { publicUrl: undefined, trustProxy: 0 };

  it("is https behind a TLS proxy: the public URL's, or a trusted proxy's header", () => {
    expect(requestScheme(null, { ...plain, publicUrl: "https://cairn.example.com" })).toBe("https");
    expect(requestScheme("https", { ...plain, trustProxy: 1 })).toBe("https");
    expect(requestScheme("HTTPS, http", { ...plain, trustProxy: 2 })).toBe("https");
  });

  it("is http on the socket, whatever an untrusted X-Forwarded-Proto says", () => {
    expect(requestScheme(null, plain)).toBe("http");
    expect(requestScheme("https", plain)).toBe("http");
    expect(requestScheme("https", { ...plain, publicUrl: "http://10.0.0.5:3000" })).toBe("http");
    expect(requestScheme("http", { ...plain, trustProxy: 1 })).toBe("http");
  });
});
