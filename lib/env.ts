/**
 * Cairn's configuration, parsed once from `process.env` with zod. Every variable
 * is documented in docs/operations.md and docs/configuration.md, whose tables
 * lib/env.test.ts holds to this schema.
 */
import { isIP } from "node:net";
import { z } from "zod";

const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === "" ? undefined : value))
  .optional();

const positiveInt = (fallback: number) => z.coerce.number().int().positive().default(fallback);

/** One network of CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: `10.0.0.0/8`, `fd00::/8`, or one address. */
export type CidrRange = { network: string; prefix: number; family: "ipv4" | "ipv6" };

function parseCidr(text: string): CidrRange | undefined {
  const [network = "", prefix, ...rest] = text.split("/");
  const family = isIP(network);
  if (family === 0 || rest.length > 0) return undefined;
  const bits = family === 4 ? 32 : 128;
  const length = prefix === undefined ? bits : Number(prefix);
  if (!/^\d{1,3}$/.test(prefix ?? String(bits)) || length > bits) return undefined;
  return { network, prefix: length, family: family === 4 ? "ipv4" : "ipv6" };
}

/**
 * A comma-separated list, each item read by `parse`; empty or unset, none. The
 * first item `parse` refuses stops the start, named with what was `expected`.
 */
function commaList<T>(parse: (item: string) => T | undefined, expected: string) {
  return z
    .string()
    .default("")
    .transform((value, context) => {
      const items: T[] = [];
      for (const part of value
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean)) {
        const item = parse(part);
        if (item === undefined) {
          context.addIssue({ code: "custom", message: `${part} is not ${expected}` });
          return z.NEVER;
        }
        items.push(item);
      }
      return items;
    });
}

/** An origin as browsers send it (scheme://host[:port], http or https); a trailing slash is forgiven. */
function parseOrigin(text: string): string | undefined {
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (url === undefined || !/^https?:$/.test(url.protocol)) return undefined;
  return url.origin === text.replace(/\/$/, "") ? url.origin : undefined;
}

const envSchema = z.object({
  NODE_ENV: z.enum(["development", "production", "test"]).default("development"),
  /** A PostgreSQL URL. Unset: the embedded database (PGlite) in CAIRN_DATA_DIR. */
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, "must be a postgres:// or postgresql:// URL")
      .optional(),
  ),
  /**
   * Named prepared statements on a server database: `on` (the default, plans
   * reused) or `off` behind a transaction pooler that cannot carry them
   * (docs/operations.md, "Transaction poolers").
   */
  CAIRN_PREPARED_STATEMENTS: z
    .enum(["on", "off"], { error: "must be on or off" })
    .default("on")
    .transform((value) => value === "on"),
  CAIRN_DATA_DIR: z.string().trim().min(1).default(".data/pglite"),
  AUTH_SECRET: optionalString.pipe(
    z.string().min(32, "must be at least 32 characters (openssl rand -base64 32)").optional(),
  ),
  /**
   * The key that signs audit chain heads (docs/audit.md, docs/operations.md);
   * unset, one derived from AUTH_SECRET. The keys that signed before a
   * rotation, comma-separated, in CAIRN_AUDIT_PREVIOUS_KEYS.
   */
  CAIRN_AUDIT_KEY: optionalString.pipe(
    z.string().min(32, "must be at least 32 characters (openssl rand -base64 32)").optional(),
  ),
  CAIRN_AUDIT_PREVIOUS_KEYS: z
    .string()
    .default("")
    .transform((value, context) => {
      const keys = value
        .split(",")
        .map((item) => item.trim())
        .filter(Boolean);
      if (keys.some((key) => key.replace(/^auth-secret:/, "").length < 32)) {
        context.addIssue({
          code: "custom",
          message:
            "each key must be at least 32 characters (a former AUTH_SECRET as auth-secret:SECRET)",
        });
        return z.NEVER;
      }
      return keys;
    }),
  /** Milliseconds between two passes that sign the heads of trails that grew (docs/audit.md). */
  CAIRN_AUDIT_SIGN_INTERVAL_MS: positiveInt(60_000),
  CAIRN_STALL_THRESHOLD_SECONDS: positiveInt(1800),
  /** Seconds a handed-out step stays with its caller; unset, the stall threshold. */
  CAIRN_STEP_LEASE_SECONDS: z.coerce.number().int().positive().optional(),
  CAIRN_MAX_BODY_BYTES: positiveInt(1_048_576),
  /** Milliseconds between two checks for due reviews (docs/reviews.md); each instance checks. */
  CAIRN_SCHEDULER_INTERVAL_MS: positiveInt(15_000),
  /** Comma-separated origins allowed to call /api/mcp from a browser, besides the app's own. */
  CAIRN_ALLOWED_ORIGINS: optionalString,
  /**
   * Comma-separated origins of browser-based MCP hosts (another site's page)
   * whose cross-origin calls to /api/mcp are answered with CORS headers; unset:
   * none, and browsers keep other sites' pages out (docs/configuration.md).
   */
  CAIRN_MCP_CORS_ORIGINS: commaList(
    parseOrigin,
    "an origin (scheme://host[:port], e.g. https://host.example)",
  ),
  /**
   * How many reverse proxies in front of Cairn append to X-Forwarded-For; 0 (the
   * default): none, and the header, which any client can write, is ignored.
   */
  CAIRN_TRUST_PROXY: z.coerce.number().int().min(0).max(10).default(0),
  /**
   * The address people and AI platforms reach Cairn at (scheme://host[:port]),
   * the OAuth issuer and the MCP resource's origin. Unset: taken from each
   * request's Host, which must be loopback or in CAIRN_ALLOWED_ORIGINS.
   */
  CAIRN_PUBLIC_URL: optionalString.pipe(
    z
      .url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" })
      .refine((value) => {
        // Runs after a failed URL check too: that one has said what is wrong.
        if (!URL.canParse(value)) return true;
        const url = new URL(value);
        return url.pathname === "/" && !url.search && !url.hash;
      }, "must be an origin (scheme://host[:port]) without a path: Cairn is served at the root")
      .transform((value) => new URL(value).origin)
      .optional(),
  ),
  /**
   * Tests and development only: lets OAuth client_id metadata documents be
   * served over http:// from a loopback address. Never set in production.
   */
  CAIRN_OAUTH_ALLOW_LOOPBACK_CLIENT_IDS: z
    .enum(["0", "1", "true", "false", ""])
    .default("")
    .transform((value) => value === "1" || value === "true"),
  CAIRN_LLM_BASE_URL: optionalString,
  CAIRN_LLM_API_KEY: optionalString,
  CAIRN_LLM_MODEL: optionalString,
  /** An SMTP URL (smtp://user:pass@host:587, smtps://…); unset with CAIRN_MAIL_FROM, e-mail is off. */
  CAIRN_SMTP_URL: optionalString,
  /** The From address of Cairn's e-mails, e.g. "Cairn <cairn@example.com>". */
  CAIRN_MAIL_FROM: optionalString,
  /**
   * The loopback and private networks webhooks may be sent to (an operator's
   * choice, docs/operations.md): comma-separated CIDR ranges. Unset, none: no
   * tenant can make Cairn call into the network it runs in.
   */
  CAIRN_WEBHOOK_ALLOWED_PRIVATE_RANGES: commaList(
    parseCidr,
    "a CIDR range (e.g. 10.0.0.0/8, fd00::/8, 192.168.1.20)",
  ),
  /** How often each instance looks for notifications to send, in milliseconds. */
  CAIRN_NOTIFY_INTERVAL_MS: positiveInt(5000),
});

export type Env = z.infer<typeof envSchema>;

/** The variables Cairn reads, as docs/operations.md and docs/configuration.md list them (lib/env.test.ts). */
export const ENV_VARIABLES = Object.keys(envSchema.shape) as (keyof Env)[];

export class ConfigError extends Error {
  override name = "ConfigError";
}

export function parseEnv(source: Readonly<Record<string, string | undefined>>): Env {
  const parsed = envSchema.safeParse(source);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  ${issue.path.join(".")}: ${issue.message}`)
      .join("\n");
    throw new ConfigError(`Cairn's configuration is invalid:\n${problems}`);
  }
  return parsed.data;
}

let cached: Env | undefined;

/** The process environment, parsed on first use and then kept. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
