/**
 * The SMTP client's time limits against the e-mail send lease: a slow mail
 * server must make a send fail before the lease ends, or another instance
 * claims the e-mail again and it is sent twice (docs/notifications.md).
 */
import { describe, expect, it } from "vitest";
import { EMAIL_SEND_LEASE_SECONDS } from "./dispatcher";
import { mailConfig, SMTP_TIMEOUTS, smtpWorstCaseMs } from "./mail";

describe("SMTP time limits", () => {
  it("give up on a slow mail server well before the send lease ends", () => {
    expect(smtpWorstCaseMs()).toBeLessThan(EMAIL_SEND_LEASE_SECONDS * 1000);
  });

  it("are the transport's, next to what CAIRN_SMTP_URL says", () => {
    const config = mailConfig("smtp://user:pw@mail.example:2525", "Cairn <cairn@example.com>");
    if (!config) throw new Error("e-mail should be on");
    // nodemailer keeps the transport's options here; its types do not say so.
    const { options } = config.transport as unknown as { options: Record<string, unknown> };
    expect(options).toMatchObject({
      ...SMTP_TIMEOUTS,
      host: "mail.example",
      port: 2525,
      auth: { user: "user", pass: "pw" },
    });
  });
});
