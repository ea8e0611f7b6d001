import type { NextConfig } from "next";
import { NON_PAGE_CSP, SECURITY_HEADERS } from "./lib/web/security-headers";

const nextConfig: NextConfig = {
  // PGlite loads its WebAssembly and data files from its own package folder at
  // run time; bundling it breaks those paths.
  serverExternalPackages: ["@electric-sql/pglite"],
  poweredByHeader: false,
  // `next build` would type-check the whole project again on every `npm start`
  // (about half its time); `npm test` and CI check the types with `tsc --noEmit`
  // (npm run typecheck) before they build, so the build only compiles.
  typescript: { ignoreBuildErrors: true },
  // Pages get their Content-Security-Policy, with a per-request nonce, from proxy.ts.
  async headers() {
    return [
      { source: "/:path*", headers: SECURITY_HEADERS },
      { source: "/api/:path*", headers: [{ key: "Content-Security-Policy", value: NON_PAGE_CSP }] },
    ];
  },
};

export default nextConfig;
