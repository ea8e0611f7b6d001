"use client";

import { useActionState } from "react";
import { ActionMessage } from "@/app/_components/action-message";
import { SubmitButton } from "@/app/_components/submit-button";
import { IDLE } from "@/lib/web/action-state";
import { emailNotificationsAction } from "./actions";

/** The person's switch for e-mails (reviews requested, due soon, timed out; their plans cancelled). */
export function EmailNotificationsForm({
  on,
  mailConfigured,
}: {
  on: boolean;
  mailConfigured: boolean;
}) {
  const [state, action] = useActionState(emailNotificationsAction, IDLE);
  return (
    <form action={action} className="form card" aria-labelledby="emails-heading">
      <h2 id="emails-heading">Review e-mails</h2>
      <p data-testid="email-notifications">
        {on
          ? "You get an e-mail when a review is requested from you or your team, is due soon, or timed out, and when a plan you started is cancelled."
          : "You get no review e-mails."}
        {mailConfigured ? null : " (E-mail is off on this server: nothing is sent yet.)"}
      </p>
      <input type="hidden" name="emails" value={on ? "off" : "on"} />
      <ActionMessage state={state} />
      <SubmitButton>{on ? "Turn review e-mails off" : "Turn review e-mails on"}</SubmitButton>
    </form>
  );
}
