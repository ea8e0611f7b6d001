export async function register() {
  // The database and secrets belong to the Node server only, and `next build`
  // must not open (and lock) the embedded folder.
  if (process.env.NEXT_RUNTIME !== "nodejs") return;
  if (process.env.NEXT_PHASE === "phase-production-build") return;
  const { startCairnOrExit } = await import("./lib/startup");
  await startCairnOrExit();
}
