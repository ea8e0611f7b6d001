import type { ReactNode } from "react";

/** The consent page stands alone: no navigation to lead the person away mid-flow. */
export default function ConsentLayout({ children }: { children: ReactNode }) {
  return (
    <>
      <header className="site-header">
        <span className="brand">Cairn</span>
      </header>
      <main id="main">{children}</main>
    </>
  );
}
