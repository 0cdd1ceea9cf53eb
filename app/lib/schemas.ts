import { z } from "zod";

/**
 * Form schemas shared by the browser (Conform live validation) and the server (actions).
 * Messages are the spec's strings.
 */
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]{2,}$/;
export const MESSAGES = {
  email: "Please enter a valid email address.",
  password: "Please enter a password.",
  code: "Please enter a valid MFA code.",
} as const;

/** One rule, one message: 6 to 64 characters matching the pattern. */
const email = z
  .string({ required_error: MESSAGES.email })
  .trim()
  .refine((v) => v.length >= 6 && v.length <= 64 && EMAIL_PATTERN.test(v), MESSAGES.email);

const redirectTo = z.string().max(2000).optional();

export const MagicLinkSchema = z.object({ intent: z.literal("magic-link"), email, redirectTo });

/** Code: digits and spaces only (six digits once the spaces are gone). */
export const mfaCode = z
  .string({ required_error: MESSAGES.code })
  .refine((v) => /^[\d ]+$/.test(v) && v.replace(/ /g, "").length === 6, MESSAGES.code);

export const MfaLoginSchema = z.object({
  intent: z.literal("mfa"),
  email,
  password: z.string({ required_error: MESSAGES.password }).min(1, MESSAGES.password).max(1024, MESSAGES.password),
  code: mfaCode,
  redirectTo,
});

export const TotpChallengeSchema = z.object({ code: mfaCode });

export const ThemeSchema = z.object({
  theme: z.enum(["lightmode", "darkmode"]),
  redirectTo,
});

/** Image metadata limits (the spec gives the keyword rules; the others are ours, stated in the form hints). */
export const LIMITS = { title: 120, description: 2000, ocr: 10_000, keywords: 30, keywordMin: 2, keywordMax: 20 } as const;
const KEYWORD_SPECIAL = /[()&@*$|%~]/;

/** Keywords typed as one comma-separated string: trimmed, empty entries dropped, duplicates (any case) once. */
export function splitKeywords(value: string): string[] {
  const seen = new Set<string>();
  return value
    .split(",")
    .map((k) => k.trim().replace(/\s+/g, " "))
    .filter((k) => k && !seen.has(k.toLowerCase()) && seen.add(k.toLowerCase()));
}

/** The spec's first failing keyword rule, or null. */
export function keywordProblem(keywords: string[]): string | null {
  for (const k of keywords) {
    if (k.length > LIMITS.keywordMax) return `Keyword "${k.slice(0, LIMITS.keywordMax)}.." should be less than 20 characters`;
    if (k.length < LIMITS.keywordMin) return `Keyword "${k}" should be at least 2 characters long`;
    if (KEYWORD_SPECIAL.test(k)) return "Keyword should not contain any special characters";
  }
  if (keywords.length > LIMITS.keywords) return `At most ${LIMITS.keywords} keywords`;
  return null;
}

const keywords = z
  .string()
  .max(2000, `At most ${LIMITS.keywords} keywords`)
  .optional()
  .transform((v) => splitKeywords(v ?? ""))
  .superRefine((list, ctx) => {
    const problem = keywordProblem(list);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

const text = (max: number, name: string) =>
  z
    .string()
    .max(max, `${name} cannot be longer than ${max} characters`)
    .optional()
    .transform((v) => (v ?? "").replace(/\r\n/g, "\n").trim());

/** Edit Image (upload page) and the image panel's edit mode. `rotate`: degrees to turn further, in 90° steps. */
export const ImageEditSchema = z.object({
  title: text(LIMITS.title, "Title"),
  description: text(LIMITS.description, "Description"),
  keywords,
  ocr: text(LIMITS.ocr, "OCR text"),
  rotate: z.enum(["0", "90", "180", "270"]).optional().transform((v) => Number(v ?? 0)),
  version: z.coerce.number().int().positive().optional(),
});

/** The spec's image creation call: `newImage` with the upload key and metadata. */
export const NewImageSchema = z.object({
  clientID: z.coerce.number().int().positive(),
  newImage: z.object({
    imgURL: z.string().min(1).max(200),
    imgTags: z.array(z.string().max(2000)).max(1).optional(),
    imgOrgName: z.string().max(255).optional(),
    imgType: z.string().max(100).optional(),
    imgORC: z.string().max(LIMITS.ocr, `OCR text cannot be longer than ${LIMITS.ocr} characters`).optional(),
    imgDesc: z.string().max(LIMITS.description, `Description cannot be longer than ${LIMITS.description} characters`).optional(),
    imgTitle: z.string().max(LIMITS.title, `Title cannot be longer than ${LIMITS.title} characters`).optional(),
  }),
});

/** The spec's signed-URL call. */
export const SignUploadSchema = z.object({
  clientID: z.coerce.number().int().positive(),
  fileName: z.string().trim().min(1, "A file name is required").max(255, "The file name is too long"),
  /** Optional (not in the spec's call): lets the server refuse an oversized file at once and sign its size. */
  fileSize: z.coerce.number().int().min(0).optional(),
});

/** A file's name as kept with the image: no folders, no control characters. */
export function cleanFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? "";
  return base.replace(/[\u0000-\u001f\u007f]/g, "").trim().slice(0, 255) || "image";
}

/** A title from a file's name: the name without its extension. */
export const titleFromFileName = (name: string) => cleanFileName(name).replace(/\.[^.]+$/, "").slice(0, LIMITS.title);

export const DELETE_WORD = "DELETE";
export const DeleteImageSchema = z.object({
  confirm: z.string({ required_error: "Please type DELETE to confirm" }).refine((v) => v.trim() === DELETE_WORD, "Please type DELETE to confirm"),
});
