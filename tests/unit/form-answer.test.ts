import { parseWithZod } from "@conform-to/zod";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { formErrorsOf, resultOf } from "~/lib/form-answer";
import { formError, refused } from "~/web/http.server";

/** Two forms of one page, as a page's action parses them. */
const form = (entries: Record<string, string>) => {
  const data = new FormData();
  for (const [k, v] of Object.entries(entries)) data.set(k, v);
  return data;
};
const Email = z.object({ email: z.string({ required_error: "Enter an e-mail address" }).email("Not an e-mail address") });
const refusedEmail = parseWithZod(form({ intent: "email", email: "nope" }), { schema: Email }).reply();

describe("resultOf: each form of a page reads its own answer", () => {
  it("gives the result to the form whose intent the answer names", () => {
    const answer = { intent: "email", result: refusedEmail };
    expect(resultOf(answer, "email")).toBe(refusedEmail);
    expect(resultOf(answer, "email")?.error?.email).toEqual(["Not an e-mail address"]);
  });

  it("gives nothing to the page's other forms", () => {
    expect(resultOf({ intent: "email", result: refusedEmail }, "link")).toBeUndefined();
    expect(resultOf({ intent: "email", result: refusedEmail }, "")).toBeUndefined();
  });

  it("gives nothing before the first post, or for an answer without a result (a success with more to show)", () => {
    expect(resultOf(undefined, "email")).toBeUndefined();
    expect(resultOf(null, "email")).toBeUndefined();
    expect(resultOf({ intent: "email", result: null }, "email")).toBeUndefined();
    expect(resultOf({ made: "x" } as { intent?: string }, "email")).toBeUndefined();
  });

  it("reads a form-level message, whether Conform's reply or formError made it", () => {
    const replied = parseWithZod(form({ email: "a@b.example" }), { schema: Email }).reply({
      formErrors: ["Server error. Please try again."],
    });
    expect(formErrorsOf(replied)).toEqual(["Server error. Please try again."]);
    expect(formErrorsOf(formError("Please choose an image file."))).toEqual(["Please choose an image file."]);
    expect(formErrorsOf(refusedEmail)).toEqual([]);
    expect(formErrorsOf(undefined)).toEqual([]);
  });
});

describe("refused: one answer shape for a refused form", () => {
  it("answers { intent, result } with 400 unless told, and what else the page shows beside it", () => {
    const plain = refused("email", refusedEmail);
    expect(plain.data).toEqual({ intent: "email", result: refusedEmail });
    expect(plain.init?.status).toBe(400);
    const more = refused("save", formError("Too many"), 409, { rows: [1] });
    expect(more.data).toEqual({ intent: "save", result: formError("Too many"), rows: [1] });
    expect(more.init?.status).toBe(409);
    expect(resultOf(more.data, "save")).toEqual({ status: "error", error: { "": ["Too many"] } });
  });
});
