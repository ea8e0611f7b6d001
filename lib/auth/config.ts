/**
 * Sign-in for people (Auth.js v5): e-mail and password against the users the CLI
 * or the admin pages create. Sessions are JWTs carrying the user's id, tenant,
 * role and session version; lib/auth/session.ts checks them against the user's
 * row on every request (deleted, disabled, password changed, role changed).
 *
 * Every sign-in attempt, through the sign-in page or a direct POST to Auth.js's
 * callback, is counted against its e-mail and client address before the password
 * is hashed (lib/services/accounts/attempt-limits.ts).
 */
import "server-only";
import NextAuth, { CredentialsSignin, type DefaultSession } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { clientAddressOf } from "@/lib/auth/client-address";
import { getDb } from "@/lib/db/client";
import { env } from "@/lib/env";
import { logUnexpected, logWarning } from "@/lib/log";
import { signInWithLimits } from "@/lib/services/accounts/sign-in-with-limits";
import type { SessionClaims } from "@/lib/services/accounts/signed-in-user";

declare module "next-auth" {
  interface Session {
    user: SessionClaims & DefaultSession["user"];
  }
  interface User {
    cairn?: SessionClaims;
  }
}

declare module "@auth/core/jwt" {
  interface JWT {
    cairn?: SessionClaims;
  }
}

/** Refused before the password was checked: the e-mail or the address is over its limit. */
export class TooManyAttempts extends CredentialsSignin {
  override code = "too_many_attempts";
  constructor(readonly retryAt: Date) {
    super();
  }
}

/** The password was right, but an admin has disabled the account. */
export class AccountDisabled extends CredentialsSignin {
  override code = "account_disabled";
}

export const { handlers, auth, signIn, signOut } = NextAuth({
  // Cairn validates the Host of API calls itself and is often run behind a proxy.
  trustHost: true,
  // Auth.js's own logger prints its error's cause with the stack, whose first
  // lines are, for a failed query, the statement and its values: Cairn's
  // masked logger instead (lib/log.ts). A refused sign-in is one line, no stack.
  logger: {
    error(error) {
      if (error instanceof CredentialsSignin) {
        logWarning(`Sign-in refused (${error.code})`);
        return;
      }
      const cause = error.cause as { err?: unknown } | undefined;
      logUnexpected(`Auth.js: ${error.name}`, cause?.err ?? error.cause ?? error);
    },
  },
  session: { strategy: "jwt", maxAge: 60 * 60 * 12 },
  pages: { signIn: "/sign-in" },
  providers: [
    Credentials({
      credentials: {
        email: { label: "E-mail" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials, request) {
        const email = typeof credentials?.email === "string" ? credentials.email : "";
        const password = typeof credentials?.password === "string" ? credentials.password : "";
        if (!email || !password || email.length > 320 || password.length > 1000) {
          throw new CredentialsSignin();
        }
        const outcome = await signInWithLimits(
          await getDb(),
          { email, password },
          { address: clientAddressOf(request.headers, env().CAIRN_TRUST_PROXY) },
        );
        if (outcome.kind === "too_many_attempts") throw new TooManyAttempts(outcome.retryAt);
        if (outcome.kind === "disabled") throw new AccountDisabled();
        if (outcome.kind !== "ok") throw new CredentialsSignin();
        const { user } = outcome;
        return { id: user.userId, email: user.email, name: user.name, cairn: user };
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user?.cairn) token.cairn = user.cairn;
      return token;
    },
    session({ session, token }) {
      if (token.cairn) Object.assign(session.user, token.cairn);
      return session;
    },
  },
});
