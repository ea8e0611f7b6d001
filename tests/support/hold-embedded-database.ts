/** Opens the embedded database in argv[2], says "ready", and holds it until stdin closes. */
import { openDatabase } from "@/lib/db/client";

const handle = await openDatabase({ kind: "pglite", dataDir: process.argv[2] });
process.stdout.write("ready\n");
process.stdin.resume();
process.stdin.on("end", async () => {
  await handle.close();
  process.exit(0);
});
