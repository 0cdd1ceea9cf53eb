import { parseWithZod } from "@conform-to/zod";
import { describe, expect, it } from "vitest";
import { ATTRIBUTE_MESSAGES, NewAttributeSchema, normalAttributeName, typedAttributeName } from "~/lib/attribute-rules";

const create = (name: string) => {
  const form = new FormData();
  form.append("name", name);
  const s = parseWithZod(form, { schema: NewAttributeSchema });
  return s.status === "success" ? s.value.name : s.error?.name?.[0];
};

describe("attribute names: one rule with and without JavaScript", () => {
  const typed = ["   ", " ", "\t", "Store type", "Store  type ", " Store type", "a b c", "a \t b", "Region ", "x  "];
  it.each(typed)("what the field shows while %j is typed is stored as the name itself would be", (raw) => {
    expect(normalAttributeName(typedAttributeName(raw))).toBe(normalAttributeName(raw));
    // Posted as the field shows it (JavaScript) or as typed (none): the same answer.
    expect(create(typedAttributeName(raw))).toBe(create(raw));
  });
  it("shows the spaces between words as underscores and leaves those at either end to the trim", () => {
    expect(typedAttributeName("Store  type ")).toBe("Store_type ");
    expect(typedAttributeName("  ")).toBe("  ");
    expect(typedAttributeName(" a b")).toBe(" a_b");
  });
  it("answers a name of spaces only as blank, and trims a trailing space instead of making it an underscore", () => {
    expect(create("   ")).toBe(ATTRIBUTE_MESSAGES.nameBlank);
    expect(create("Region ")).toBe("Region");
    expect(create("Store  type ")).toBe("Store_type");
  });
});
