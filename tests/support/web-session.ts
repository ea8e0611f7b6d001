/**
 * The web door over plain HTTP, as a browser drives it: signing in through
 * Auth.js's credentials callback, reading pages with the session cookie, and
 * calling a server action the way React's client does (a POST to the page with
 * a `Next-Action` header and the arguments encoded as React encodes a reply).
 * The action's id comes from the production build's server-reference manifest.
 */
import { readFileSync } from "node:fs";
import { expect } from "vitest";
import { SEED_PASSWORD } from "./app-server";

export type WebSession = {
  /**
   * GETs a path with the session cookie and any `headers` (`RSC: 1` asks for
   * the page's React payload alone); redirects are not followed.
   */
  get(path: string, headers?: Record<string, string>): Promise<Response>;
  /**
   * Calls a `(previousState, formData)` server action (the useActionState kind)
   * from the page at `path`; returns the response and its body text (the RSC
   * payload, which carries the action's returned state; a redirect is in the
   * `x-action-redirect` header).
   */
  action(
    path: string,
    actionName: string,
    fields: Record<string, string>,
    /** Headers sent instead of the browser's own (an `Origin` of another site). */
    headers?: Record<string, string>,
  ): Promise<{ status: number; text: string; headers: Headers }>;
};

/** Each `Set-Cookie` of a response as `name=value`. */
function cookiesOf(response: Response): string[] {
  return response.headers.getSetCookie().map((cookie) => cookie.split(";")[0] as string);
}

/** The id of a server action exported under `name`, from the build's manifest. */
export function serverActionId(name: string): string {
  const manifest = JSON.parse(
    readFileSync(".next/server/server-reference-manifest.json", "utf8"),
  ) as { node: Record<string, { exportedName?: string }> };
  const ids = Object.entries(manifest.node)
    .filter(([, entry]) => entry.exportedName === name)
    .map(([id]) => id);
  if (ids.length !== 1) throw new Error(`server action ${name}: ${ids.length} ids in the build`);
  return ids[0] as string;
}

/** Signs in with e-mail and password through Auth.js's credentials callback. */
export async function signInOverHttp(
  baseUrl: string,
  email: string,
  password = SEED_PASSWORD,
): Promise<WebSession> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const jar = new Map<string, string>();
  const keep = (response: Response) => {
    for (const cookie of cookiesOf(response)) {
      const at = cookie.indexOf("=");
      jar.set(cookie.slice(0, at), cookie.slice(at + 1));
    }
  };
  keep(csrf);
  const cookieHeader = () => [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
  const signedIn = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: "POST",
    redirect: "manual",
    headers: {
      "Content-Type": "application/x-www-form-urlencoded",
      Cookie: cookieHeader(),
    },
    body: new URLSearchParams({ csrfToken, email, password, callbackUrl: `${baseUrl}/plans` }),
  });
  keep(signedIn);
  if (![...jar.keys()].some((name) => name.includes("session-token"))) {
    throw new Error(`signing in ${email} set no session cookie (HTTP ${signedIn.status})`);
  }

  return {
    get(path, headers = {}) {
      return fetch(`${baseUrl}${path}`, {
        redirect: "manual",
        headers: { ...headers, Cookie: cookieHeader() },
      });
    },
    async action(path, actionName, fields, headers = {}) {
      // React encodes the call `action(previousState, formData)` as a multipart
      // reply (react-server-dom's encodeReply): the form's fields as "_1_<name>",
      // then part "0", the argument list, where "$K1" stands for that form.
      const body = new FormData();
      for (const [name, value] of Object.entries(fields)) body.append(`_1_${name}`, value);
      body.append("0", JSON.stringify([{ status: "idle" }, "$K1"]));
      const response = await fetch(`${baseUrl}${path}`, {
        method: "POST",
        redirect: "manual",
        headers: {
          Cookie: cookieHeader(),
          Origin: baseUrl,
          Accept: "text/x-component",
          "Next-Action": serverActionId(actionName),
          ...headers,
        },
        body,
      });
      return { status: response.status, text: await response.text(), headers: response.headers };
    },
  };
}

/**
 * A page's HTML and the RSC payload a client-side navigation to it fetches, in
 * bytes (the page-size tests: each must stay under 1 MB).
 */
export async function pageBytes(session: WebSession, path: string) {
  const page = await session.get(path);
  expect(page.status, path).toBe(200);
  const html = await page.text();
  const asked = await session.get(path, { RSC: "1" });
  const payload =
    asked.status === 307
      ? await session.get(asked.headers.get("location") ?? "", { RSC: "1" })
      : asked;
  expect(payload.status, path).toBe(200);
  expect(payload.headers.get("content-type")).toMatch(/^text\/x-component/);
  return {
    html,
    htmlBytes: Buffer.byteLength(html, "utf8"),
    payloadBytes: Buffer.byteLength(await payload.text(), "utf8"),
  };
}
