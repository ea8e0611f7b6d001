import { describe, expect, it } from "vitest";
import { isAllowedHost } from "./allowed-host";

describe("isAllowedHost", () => {
  const origins = ["https://cairn.example.com"];

  it("takes loopback names and the allowed origins' hosts, with or without a port", () => {
    for (const host of [
      "localhost",
      "localhost:3000",
      "127.0.0.1:80",
      "[::1]:3000",
      "cairn.example.com",
    ]) {
      expect(isAllowedHost(host, origins), host).toBe(true);
    }
  });

  it("refuses a Host that only starts like a loopback one (userinfo, path, second port)", () => {
    for (const host of [
      "localhost:1@evil.example",
      "localhost@evil.example",
      "127.0.0.1:80/evil.example",
      "localhost:1:2",
      "localhost evil.example",
      "[::1]@evil.example",
      "localhost.evil.example",
      "",
    ]) {
      expect(isAllowedHost(host, origins), host).toBe(false);
    }
  });
});
