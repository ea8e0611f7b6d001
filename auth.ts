/**
 * Sign-in for people (Auth.js v5): e-mail and password against the users the CLI
 * or the admin pages create. Sessions are JWTs carrying the user's id, tenant and
 * role, so every page and action can scope by tenant without a lookup.
 */
import NextAuth, { CredentialsSignin, type DefaultSession } from "next-auth";
import Credentials from "next-auth/providers/credentials";
import { getDb } from "@/lib/db/client";
import { type SignedInUser, verifyCredentials } from "@/lib/services/accounts";

declare module "next-auth" {
  interface Session {
    user: SignedInUser & DefaultSession["user"];
  }
  interface User {
    cairn?: SignedInUser;
  }
}

declare module "@auth/core/jwt" {
  interface JWT {
    cairn?: SignedInUser;
  }
}

export const { handlers, auth, signIn, signOut } = NextAuth({
  // Cairn validates the Host of API calls itself and is often run behind a proxy.
  trustHost: true,
  session: { strategy: "jwt", maxAge: 60 * 60 * 12 },
  pages: { signIn: "/sign-in" },
  providers: [
    Credentials({
      credentials: {
        email: { label: "E-mail" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials) {
        const email = typeof credentials?.email === "string" ? credentials.email : "";
        const password = typeof credentials?.password === "string" ? credentials.password : "";
        if (!email || !password) throw new CredentialsSignin();
        const user = await verifyCredentials(await getDb(), email, password);
        if (!user) throw new CredentialsSignin();
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
