import type { ReactNode } from "react";
import { requireAdmin } from "@/lib/auth/session";

/** Admin pages exist only for admins: anyone else gets a 404 before anything renders. */
export default async function AdminLayout({ children }: { children: ReactNode }) {
  await requireAdmin();
  return children;
}
