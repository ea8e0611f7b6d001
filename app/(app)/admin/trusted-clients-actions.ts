"use server";

import { z } from "zod";
import { setTrustedClients } from "@/lib/services/reviews/trusted-clients";
import { serverAction } from "@/lib/web/server-action";

/** The form: every connected app, or only the ticked ones (`clientIds`, none ticked: no app). */
const trustedClientsForm = z.object({
  trust: z.enum(["every", "only"]),
  clientIds: z.array(z.string()).optional(),
});

/** Whose decisions in a connected app (a card, an in-client form) count as a person's (docs/reviews.md). */
export const setTrustedClientsAction = serverAction({
  access: "admin",
  input: trustedClientsForm,
  run: ({ ctx, input }) =>
    setTrustedClients(ctx, { clientIds: input.trust === "every" ? null : (input.clientIds ?? []) }),
  success: (saved) =>
    saved === null
      ? "Saved: no app named. Decisions in every app people connected count as theirs where agents may relay, in none where only people decide."
      : saved.length === 0
        ? "Saved: no app's in-client answers count; people decide in Cairn."
        : `Saved: in-client answers count only from ${saved.length === 1 ? "this app" : `these ${saved.length} apps`}.`,
  revalidate: () => "/admin",
});
