import { parseWithZod } from "@conform-to/zod";
import { describe, expect, it } from "vitest";
import { formatMobile, membershipsOf, projectsAskedFor, RegistrationSchema } from "~/lib/account-schemas";
import { isCommonPassword } from "~/lib/common-passwords.server";

const form = (entries: Record<string, string> | [string, string][]) => {
  const f = new FormData();
  for (const [k, v] of Array.isArray(entries) ? entries : Object.entries(entries)) f.append(k, v);
  return f;
};
const filled = {
  intent: "review",
  name: "Ada",
  surname: "Lovelace",
  email: "ada@example.com",
  country_code: "GB",
  mobile: "82 123 4567",
  country: "GB",
  timezone: "1",
  org_unit: "Research",
  language: "en",
  client: "Acme",
  sim_use: "Shelf studies",
};
const errorsOf = (values: Record<string, string>) => {
  const s = parseWithZod(form(values), { schema: RegistrationSchema });
  return s.status === "success" ? null : s.error;
};

describe("registration rules (spec 2 §5)", () => {
  it("accepts a complete form, with the mobile typed with or without its spaces", () => {
    expect(errorsOf(filled)).toBeNull();
    expect(errorsOf({ ...filled, mobile: "821234567" })).toBeNull();
  });
  it("answers one empty field with the form's message '*Please fill in all fields'", () => {
    expect(errorsOf({ ...filled, sim_use: "" })).toEqual({ "": ["*Please fill in all fields"] });
  });
  it("refuses a malformed e-mail and a mobile that is not nine digits with their own messages", () => {
    expect(errorsOf({ ...filled, email: "ada@" })).toEqual({ email: ["*Invalid email format"] });
    for (const mobile of ["8212345", "8212345678", "82-123-4567", "82 123 456a"])
      expect(errorsOf({ ...filled, mobile })).toEqual({ mobile: ["*Invalid mobile format"] });
  });
  it("holds the spec's maximum lengths", () => {
    expect(errorsOf({ ...filled, name: "a".repeat(50) })).toBeNull();
    expect(errorsOf({ ...filled, name: "a".repeat(51) })).toEqual({ name: ["Name cannot be longer than 50 characters"] });
    expect(errorsOf({ ...filled, sim_use: "a".repeat(256) })).toEqual({
      sim_use: ["What the system will be used for cannot be longer than 255 characters"],
    });
  });
  it("formats the mobile in groups of 2-3-4, digits only; a tenth digit is kept (and refused), never cut off", () => {
    expect(formatMobile("821234567")).toBe("82 123 4567");
    expect(formatMobile(" 82 1234567")).toBe("82 123 4567");
    expect(formatMobile("82a1-23")).toBe("82 123");
    expect(formatMobile("8212345678")).toBe("82 123 45678");
    expect(errorsOf({ ...filled, mobile: formatMobile("8212345678") })).toEqual({ mobile: ["*Invalid mobile format"] });
  });
});

describe("approval roles", () => {
  it("keeps one role per project (the last), and ignores unknown roles and fields", () => {
    expect(
      membershipsOf(
        form([
          ["role-3", "viewer"],
          ["role-3", "manager"],
          ["role-4", "owner"],
          ["role-x", "editor"],
          ["role-5", ""],
          ["role-6", "editor"],
        ]),
      ),
    ).toEqual([
      { projectId: 3, role: "manager" },
      { projectId: 6, role: "editor" },
    ]);
  });
});

describe("common passwords", () => {
  it("refuses listed passwords, the same wrapped in digits or symbols, and repeats", async () => {
    for (const p of ["password1234", "Password2024!", "123456789012", "monkeymonkey", "aaaaaaaaaaaa", "qazwsxedcrfv"])
      expect(await isCommonPassword(p), p).toBe(true);
  });
  it("accepts a long password that is not on the list", async () => {
    for (const p of ["blue-kettle-42-river", "koala-demo-2026", "correct horse battery"]) expect(await isCommonPassword(p), p).toBe(false);
  });
});

describe("the projects an application asked for (free text, matched on the admin's page)", () => {
  const projects = [
    { id: 1, name: "Acme Beverages" },
    { id: 2, name: "Northwind Retail" },
    { id: 3, name: "Café Crème, Paris" },
    { id: 4, name: "Test" },
  ];
  it("matches each part between commas, semicolons, & or + to a project's name in any case, accents and spacing", () => {
    expect(projectsAskedFor("acme  beverages; NORTHWIND retail", projects)).toEqual({ ids: [1, 2], unmatched: [] });
    expect(projectsAskedFor("Acme Beverages & Globex + northwind retail", projects)).toEqual({ ids: [1, 2], unmatched: ["Globex"] });
    expect(projectsAskedFor("cafe creme, paris", projects)).toEqual({ ids: [3], unmatched: [] });
  });
  it("never matches a project by a word inside a sentence, and names what matched nothing", () => {
    expect(projectsAskedFor("I want to test the Acme Beverages images", projects)).toEqual({
      ids: [],
      unmatched: ["I want to test the Acme Beverages images"],
    });
    expect(projectsAskedFor("  ", projects)).toEqual({ ids: [], unmatched: [] });
  });
});
