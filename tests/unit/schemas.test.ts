import { describe, expect, it } from "vitest";
import {
  ImageEditSchema,
  KEYWORD_HINT,
  keywordProblem,
  KeywordsSchema,
  MagicLinkSchema,
  MESSAGES,
  MFA_CODE_PATTERN,
  MfaLoginSchema,
  TotpChallengeSchema,
} from "~/lib/schemas";

const issues = (r: { success: boolean; error?: { issues: { path: (string | number)[]; message: string }[] } }) =>
  r.success ? [] : r.error!.issues.map((i) => `${i.path.join(".")}: ${i.message}`);

describe("magic-link form", () => {
  const parse = (email: unknown) => MagicLinkSchema.safeParse({ intent: "magic-link", email });
  it("accepts a valid address and trims it", () => {
    const r = parse("  ana@example.com ");
    expect(r.success && r.data.email).toBe("ana@example.com");
  });
  it.each([undefined, "", "no-at-sign", "a@b", "a@b.c", "x@y.io".padStart(65, "a"), "two@@example.com", "sp ace@example.com"])(
    "refuses %j with the spec's message",
    (email) => {
      expect(issues(parse(email))).toEqual([`email: ${MESSAGES.email}`]);
    },
  );
  it("keeps the length limits of 6 to 64", () => {
    expect(parse("a@b.co").success).toBe(true); // 6 characters
    expect(parse(`${"a".repeat(55)}@exam.com`).success).toBe(true); // 64
    expect(parse(`${"a".repeat(56)}@exam.com`).success).toBe(false); // 65
  });
});

describe("MFA form", () => {
  const base = { intent: "mfa", email: "ana@example.com", password: "secret", code: "123 456" };
  it("accepts digits and spaces in the code", () => {
    expect(MfaLoginSchema.safeParse(base).success).toBe(true);
  });
  it("gives each field its spec message", () => {
    expect(issues(MfaLoginSchema.safeParse({ intent: "mfa" }))).toEqual([
      `email: ${MESSAGES.email}`,
      `password: ${MESSAGES.password}`,
      `code: ${MESSAGES.code}`,
    ]);
  });
  it.each(["12a456", "12-456", "1234567", "12345", "   "])("refuses the code %j", (code) => {
    expect(issues(MfaLoginSchema.safeParse({ ...base, code }))).toEqual([`code: ${MESSAGES.code}`]);
  });
  it("gives the field the schema's own rule as its pattern, as a browser compiles it (v flag, whole value)", () => {
    const asBrowser = new RegExp(`^(?:${MFA_CODE_PATTERN})$`, "v");
    for (const code of ["123456", "123 456", " 1 2 3 4 5 6 ", "12a456", "12-456", "1234567", "12345", "   ", "１２３４５６"])
      expect(asBrowser.test(code), code).toBe(TotpChallengeSchema.safeParse({ code }).success);
  });
  it("validates the code of the TOTP step after a magic link the same way", () => {
    expect(TotpChallengeSchema.safeParse({ code: "000 000" }).success).toBe(true);
    expect(issues(TotpChallengeSchema.safeParse({ code: "abc" }))).toEqual([`code: ${MESSAGES.code}`]);
  });
});

describe("keywords (spec 1 §5: 2 to 20 characters, under 20)", () => {
  const tooLong = (k: string) => `Keyword "${k.slice(0, 19)}.." should be less than 20 characters`;
  it("takes a keyword of 19 characters and refuses one of 20 with the spec's words, on every form that takes keywords", () => {
    const nineteen = "limited edition box";
    const twenty = "end of aisle display";
    expect([nineteen.length, twenty.length]).toEqual([19, 20]);
    expect(keywordProblem([nineteen])).toBeNull();
    expect(keywordProblem(["ok", twenty])).toBe(tooLong(twenty));
    expect(KeywordsSchema.safeParse({ keywords: `promo, ${nineteen}` }).success).toBe(true);
    expect(issues(KeywordsSchema.safeParse({ keywords: `promo, ${twenty}` }))).toEqual([`keywords: ${tooLong(twenty)}`]);
    expect(issues(ImageEditSchema.safeParse({ keywords: twenty }))).toEqual([`keywords: ${tooLong(twenty)}`]);
  });
  it("says the same limit under the fields", () => {
    expect(KEYWORD_HINT).toContain("less than 20 characters");
  });
});
