import { existsSync } from "node:fs";

/** Fails the run at once, with the fix, when the browser is missing (never a silent skip). */
export default function globalSetup() {
  const chromium = process.env.CAIRN_CHROMIUM ?? "/usr/bin/chromium";
  if (!existsSync(chromium)) {
    throw new Error(
      `Chromium is not installed at ${chromium}. Install Debian's: apt-get install -y chromium (or set CAIRN_CHROMIUM).`,
    );
  }
}
