/**
 * Cairn's address for links that leave the request behind (e-mails, the
 * review link in an MCP answer): CAIRN_PUBLIC_URL, else the address `npm start`
 * serves. No request's Host stands in for it, so no caller can choose the link.
 */
import "server-only";
import { env } from "../../env";

export function publicBaseUrl(): string {
  return env().CAIRN_PUBLIC_URL ?? `http://127.0.0.1:${process.env.PORT ?? "3000"}`;
}

/** The plan page, where its pending review is answered (the inbox links there too). */
export function reviewPageUrl(planId: string): string {
  return `${publicBaseUrl()}/plans/${planId}#review`;
}
