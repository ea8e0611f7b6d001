import Link from "next/link";
import { signOutAction } from "@/app/(public)/sign-in/actions";
import type { SignedInUser } from "@/lib/services/accounts/signed-in-user";
import { views } from "@/lib/web/views";

/**
 * The header of a signed-in person, on the app's pages and on the public ones
 * they can also open (Connect), so a signed-in admin never meets the
 * signed-out header.
 */
export async function SignedInHeader({ user }: { user: SignedInUser }) {
  const inbox = await views.inboxCount(user);
  return (
    <header className="site-header">
      <Link href="/plans" className="brand">
        Cairn
      </Link>
      <nav aria-label="Main">
        <Link href="/plans">Plans</Link>
        <Link href="/inbox" data-testid="inbox">
          Inbox <span className={inbox > 0 ? "count count-active" : "count"}>{inbox}</span>
          <span className="sr-only"> plans awaiting review</span>
        </Link>
        <Link href="/library">Library</Link>
        {user.role === "admin" ? (
          <>
            <Link href="/admin">Admin</Link>
            <Link href="/admin/stalled">Stalled</Link>
            <Link href="/admin/failed">Failed</Link>
            <Link href="/admin/tool-calls">Tool calls</Link>
            <Link href="/admin/skills">Skill runs</Link>
            <Link href="/admin/users">Users &amp; keys</Link>
            <Link href="/admin/webhooks">Webhooks</Link>
          </>
        ) : null}
        <Link href="/connect">Connect</Link>
        <Link href="/account">Account</Link>
      </nav>
      <form action={signOutAction} className="signed-in">
        <span className="muted" data-testid="signed-in-as">
          {user.email} · {user.role}
        </span>
        <button type="submit" className="link-button">
          Sign out
        </button>
      </form>
    </header>
  );
}
