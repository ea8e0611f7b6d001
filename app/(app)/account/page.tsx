import type { Metadata } from "next";
import { ConnectedAppsTable } from "@/app/_components/connected-apps";
import { requireUser, userContext } from "@/lib/auth/session";
import { env } from "@/lib/env";
import { describePasswordChange } from "@/lib/services/accounts/change-own-password";
import { listConnectedApps } from "@/lib/services/accounts/connected-apps";
import { emailNotificationsOn } from "@/lib/services/accounts/email-preferences";
import { revokeOwnAppAction } from "./actions";
import { EmailNotificationsForm } from "./email-form";
import { ChangePasswordForm } from "./password-form";

export const metadata: Metadata = { title: "Your account" };

export default async function AccountPage({
  searchParams,
}: {
  searchParams: Promise<{ changed?: string; apps?: string; keys?: string }>;
}) {
  const user = await requireUser();
  const { changed, apps: appsEnded, keys: keysEnded } = await searchParams;
  // After a password change (the action's redirect): what it ended, as counted then.
  const changedMessage =
    changed === "everywhere" || changed === "sessions"
      ? describePasswordChange({
          everywhere: changed === "everywhere",
          appsRevoked: Number(appsEnded) || 0,
          apiKeysRevoked: Number(keysEnded) || 0,
        })
      : undefined;
  const ctx = await userContext(user);
  const apps = await listConnectedApps(ctx, { own: true });
  const emailsOn = await emailNotificationsOn(ctx);
  const config = env();
  return (
    <section className="narrow">
      <h1>Your account</h1>
      <p>
        {user.name ? `${user.name} · ` : null}
        {user.email} · {user.role}
      </p>
      <ChangePasswordForm email={user.email} changedMessage={changedMessage} />
      <EmailNotificationsForm
        on={emailsOn}
        mailConfigured={Boolean(config.CAIRN_SMTP_URL && config.CAIRN_MAIL_FROM)}
      />
      <p className="muted">
        Changing your password signs you out everywhere else and, unless you untick it, ends your
        connected apps and API keys. An admin of your team changes roles, and can disable or delete
        accounts.
      </p>
      <h2>Your connected apps</h2>
      <ConnectedAppsTable apps={apps} revoke={revokeOwnAppAction} showUser={false} />
    </section>
  );
}
