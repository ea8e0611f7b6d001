/** The benchmark's account: one tenant, one user, one API key, made through the real use cases. */
import type { Database } from "@/lib/db/client";
import { createApiKey, createUser } from "@/lib/services/accounts";

export type BenchTenant = { tenantId: string; apiKeyId: string; key: string };

export async function createBenchTenant(db: Database, name: string): Promise<BenchTenant> {
  const email = `${name.toLowerCase()}@bench.example.com`;
  const user = await createUser(db, {
    email,
    password: "benchmark password",
    role: "admin",
    tenant: name,
  });
  const key = await createApiKey(db, { email, name: `${name} agents` });
  return { tenantId: user.tenantId, apiKeyId: key.apiKeyId, key: key.key };
}
