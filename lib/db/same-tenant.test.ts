/**
 * Every lookup of a tenant's row by its id in lib/ tests the row's tenant and
 * plan with `sameTenant` and `samePlan` (or IS NOT DISTINCT FROM in SQL
 * text), never with =, so no plan serves it from the tenant's or the plan's
 * index (same-tenant.ts). A check of the source, since a new lookup comes with
 * every feature; what each finds is shown on examples first.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/** A parameter in SQL text: drizzle's interpolation or a fixed statement's `$n`, maybe cast. */
const PARAM = String.raw`(?:\$\{[^}]+\}|\$\d+|\([^()]*\))(?:::uuid)?`;

/** The lookups by id in `source` whose tenant or plan is tested with =. */
function ownerEqualityLookups(source: string): string[] {
  const found: string[] = [];
  // drizzle: and(eq(t.id, …) or inArray(t.id, …), …, eq(t.tenantId, …) or eq(t.planId, …)).
  for (const match of source.matchAll(/eq\((\w+)\.(?:tenantId|planId), /g)) {
    const before = source.slice(Math.max(0, match.index - 300), match.index);
    const scope = before.slice(Math.max(0, before.lastIndexOf("and(")));
    if (new RegExp(`(?:eq|inArray)\\(${match[1]}\\.id,`).test(scope)) {
      found.push(source.slice(Math.max(0, match.index - 60), match.index + 30));
    }
  }
  // SQL text: an id given as a parameter, then, among the conditions that
  // follow it, its row's tenant or plan with =.
  const lookup = new RegExp(
    String.raw`\b(?:(\w+)\.)?id = ${PARAM}((?:\s+and\s+(?:\w+\.)?\w+ (?:=|is not distinct from) ${PARAM})+)`,
    "g",
  );
  for (const match of source.matchAll(lookup)) {
    const alias = match[1];
    for (const clause of (match[2] ?? "").matchAll(/(?:(\w+)\.)?(?:tenant_id|plan_id) = /g)) {
      if (clause[1] === alias) found.push(match[0]);
    }
  }
  return found;
}

/** lib/'s source files, listed as the other checks of lib/ list them (layers.test.ts). */
function sourceFiles(): string[] {
  return (readdirSync("lib", { recursive: true }) as string[])
    .filter((file) => /\.tsx?$/.test(file) && !/\.test\.tsx?$/.test(file))
    .map((file) => join("lib", file));
}

describe("lookups by id, with their tenant and plan", () => {
  it("finds a tenant or plan tested with = beside an id, in drizzle and in SQL text", () => {
    expect(
      ownerEqualityLookups(
        "where(and(eq(researchPlans.id, planId), eq(researchPlans.tenantId, ctx.tenantId)))",
      ),
    ).toHaveLength(1);
    expect(
      ownerEqualityLookups("and(inArray(artifacts.id, ids),\n  eq(artifacts.tenantId, tenantId))"),
    ).toHaveLength(1);
    expect(
      ownerEqualityLookups(`where p.id = \${planId}::uuid and p.tenant_id = \${t}`),
    ).toHaveLength(1);
    expect(ownerEqualityLookups("where id = $1::uuid and tenant_id = $2::uuid")).toHaveLength(1);
    expect(
      ownerEqualityLookups("and(eq(planSteps.id, stepId), eq(planSteps.planId, planId))"),
    ).toHaveLength(1);
    expect(
      ownerEqualityLookups(
        "where id = $3::uuid and plan_id = (select id from plan) and tenant_id is not distinct from $2::uuid",
      ),
    ).toHaveLength(1);
    expect(
      ownerEqualityLookups(
        "where id = $3::uuid and plan_id is not distinct from (select id from plan) and tenant_id = $2::uuid",
      ),
    ).toHaveLength(1);
  });

  it("passes sameTenant, a list by tenant and a join", () => {
    expect(
      ownerEqualityLookups(
        "and(eq(researchPlans.id, planId), sameTenant(researchPlans.tenantId, ctx.tenantId))",
      ),
    ).toEqual([]);
    expect(
      ownerEqualityLookups(
        "and(eq(plans.status, 'failed'), eq(plans.tenantId, t)); and(eq(other.id, x))",
      ),
    ).toEqual([]);
    expect(ownerEqualityLookups("on p.id = a.plan_id and p.tenant_id = a.tenant_id")).toEqual([]);
    expect(
      ownerEqualityLookups(`where p.id = \${planId}::uuid and p.tenant_id is not distinct from $2`),
    ).toEqual([]);
    expect(
      ownerEqualityLookups(
        "and(eq(planSteps.id, stepId), samePlan(planSteps.planId, planId), sameTenant(planSteps.tenantId, t))",
      ),
    ).toEqual([]);
    expect(
      ownerEqualityLookups(
        "where id = $3::uuid and plan_id is not distinct from (select id from plan)\n    and tenant_id is not distinct from $2::uuid",
      ),
    ).toEqual([]);
    expect(ownerEqualityLookups("where s.plan_id = $1::uuid and s.tenant_id = $2::uuid")).toEqual(
      [],
    );
  });

  it("holds for every lookup in lib/", () => {
    const found = sourceFiles().flatMap((path) =>
      ownerEqualityLookups(readFileSync(path, "utf8")).map((lookup) => `${path}: ${lookup}`),
    );
    expect(found).toEqual([]);
  });
});
