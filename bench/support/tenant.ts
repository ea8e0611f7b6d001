/** The benchmark's account: one tenant, one user, one API key, made through the real use cases. */
import type { Database } from "@/lib/db/client";
import { createApiKey } from "@/lib/services/accounts/create-api-key";
import { createUser } from "@/lib/services/accounts/create-user";

export type BenchTenant = {
  tenantId: string;
  apiKeyId: string;
  key: string;
  /** The tenant's admin, who signs in to read the plan page. */
  email: string;
  password: string;
};

const PASSWORD = "benchmark password";

export async function createBenchTenant(db: Database, name: string): Promise<BenchTenant> {
  const email = `${name.toLowerCase()}@bench.example.com`;
  const user = await createUser(db, {
    email,
    password: PASSWORD,
    role: "admin",
    tenant: name,
  });
  const key = await createApiKey(db, { email, name: `${name} agents` });
  return {
    tenantId: user.tenantId,
    apiKeyId: key.apiKeyId,
    key: key.key,
    email,
    password: PASSWORD,
  };
}
