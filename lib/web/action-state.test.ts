import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseInput } from "../services/shared/validation";
import { formInput } from "./action-state";

const schema = z.object({ email: z.string(), name: z.string().optional() });

function form(entries: Record<string, string>): FormData {
  const data = new FormData();
  for (const [name, value] of Object.entries(entries)) data.append(name, value);
  return data;
}

describe("formInput", () => {
  it("drops an empty optional field and keeps an empty required one for the schema's message", () => {
    expect(formInput(schema, form({ email: "", name: "" }))).toEqual({ email: "" });
  });

  it("keeps filled fields, and fields the schema does not name (parseInput refuses them)", () => {
    const input = formInput(schema, form({ email: "a@b.c", name: "Ada", nmae: "x" }));
    expect(input).toEqual({ email: "a@b.c", name: "Ada", nmae: "x" });
    expect(() => parseInput(schema, input)).toThrow(/Unknown field nmae \(did you mean name\?\)/);
  });

  it("leaves out Next.js's own fields and the form's own fields the action names", () => {
    const data = form({ email: "a@b.c", confirm: "a@b.c", $ACTION_KEY: "k" });
    data.append("$ACTION_ID_abc123", "");
    expect(formInput(schema, data, ["confirm"])).toEqual({ email: "a@b.c" });
  });

  it("takes __proto__ and constructor as plain field names, not as the object's", () => {
    const input = formInput(schema, form({ email: "a@b.c", __proto__: "x", constructor: "y" }));
    expect(Object.getPrototypeOf(input)).toBeNull();
    expect({ ...input }).toEqual({ email: "a@b.c", __proto__: "x", constructor: "y" });
    expect(schema.parse(input)).toEqual({ email: "a@b.c" });
  });

  it("reads the shape of a refined object schema", () => {
    const refined = schema.refine((input) => input.email !== "");
    expect(formInput(refined, form({ email: "a@b.c", name: "" }))).toEqual({ email: "a@b.c" });
  });

  it("gathers every value of a list field (checkboxes of one name)", () => {
    const listed = z.object({ events: z.array(z.string()).default([]) });
    const data = new FormData();
    data.append("events", "plan.completed");
    data.append("events", "plan.failed");
    expect(formInput(listed, data)).toEqual({ events: ["plan.completed", "plan.failed"] });
    expect(formInput(listed, form({ events: "plan.failed" }))).toEqual({ events: ["plan.failed"] });
  });

  it("leaves out files", () => {
    const data = form({ email: "a@b.c" });
    data.append("upload", new Blob(["x"]));
    expect(formInput(schema, data)).toEqual({ email: "a@b.c" });
  });
});
