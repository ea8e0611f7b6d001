/**
 * Every lookup of a tenant's row by its id in lib/ tests the tenant with
 * `sameTenant` (or IS NOT DISTINCT FROM in SQL text), never with =, so no
 * generic plan serves it from the tenant's index (same-tenant.ts). A check of
 * the source, since a new lookup comes with every feature; what each finds is
 * shown on examples first.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** The lookups by id in `source` whose tenant is tested with =. */
function tenantEqualityLookups(source: string): string[] {
  const found: string[] = [];
  // drizzle: and(eq(t.id, …) or inArray(t.id, …), …, eq(t.tenantId, …)).
  for (const match of source.matchAll(/eq\((\w+)\.tenantId, /g)) {
    const before = source.slice(Math.max(0, match.index - 300), match.index);
    const scope = before.slice(Math.max(0, before.lastIndexOf("and(")));
    if (new RegExp(`(?:eq|inArray)\\(${match[1]}\\.id,`).test(scope)) {
      found.push(source.slice(Math.max(0, match.index - 60), match.index + 30));
    }
  }
  // SQL text: an id given as a parameter, then its row's tenant with =.
  for (const match of source.matchAll(
    /\b(?:(\w+)\.)?id = (?:\$\{[^}]+\}|\$\d)(?:::uuid)?\s+and\s+(?:(\w+)\.)?tenant_id = /g,
  )) {
    if (match[1] === match[2]) found.push(match[0]);
  }
  return found;
}

/** lib/'s source files, listed as the other checks of lib/ list them (layers.test.ts). */
function sourceFiles(): string[] {
  return (readdirSync("lib", { recursive: true }) as string[])
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => join("lib", file));
}

describe("lookups by id and tenant", () => {
  it("finds a tenant tested with = beside an id, in drizzle and in SQL text", () => {
    expect(
      tenantEqualityLookups(
        "where(and(eq(researchPlans.id, planId), eq(researchPlans.tenantId, ctx.tenantId)))",
      ),
    ).toHaveLength(1);
    expect(
      tenantEqualityLookups("and(inArray(artifacts.id, ids),\n  eq(artifacts.tenantId, tenantId))"),
    ).toHaveLength(1);
    expect(
      tenantEqualityLookups(`where p.id = \${planId}::uuid and p.tenant_id = \${t}`),
    ).toHaveLength(1);
    expect(tenantEqualityLookups("where id = $1::uuid and tenant_id = $2::uuid")).toHaveLength(1);
  });

  it("passes sameTenant, a list by tenant and a join", () => {
    expect(
      tenantEqualityLookups(
        "and(eq(researchPlans.id, planId), sameTenant(researchPlans.tenantId, ctx.tenantId))",
      ),
    ).toEqual([]);
    expect(
      tenantEqualityLookups(
        "and(eq(plans.status, 'failed'), eq(plans.tenantId, t)); and(eq(other.id, x))",
      ),
    ).toEqual([]);
    expect(tenantEqualityLookups("on p.id = a.plan_id and p.tenant_id = a.tenant_id")).toEqual([]);
    expect(
      tenantEqualityLookups(
        `where p.id = \${planId}::uuid and p.tenant_id is not distinct from $2`,
      ),
    ).toEqual([]);
  });

  it("holds for every lookup in lib/", () => {
    const found = sourceFiles().flatMap((path) =>
      tenantEqualityLookups(readFileSync(path, "utf8")).map((lookup) => `${path}: ${lookup}`),
    );
    expect(found).toEqual([]);
  });
});
