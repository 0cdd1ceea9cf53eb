import { z } from "zod";
import { parseId } from "./ids";

/**
 * Form schemas shared by the browser (Conform live validation) and the server (actions).
 * Messages are the spec's strings.
 */
/**
 * One address, strictly: the HTML standard's valid e-mail address (no spaces, commas, semicolons, quotes or angle
 * brackets, so nothing a mail library could read as a list of recipients), with a dotted domain.
 */
export const EMAIL_PATTERN =
  /^[A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]+@[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.[A-Za-z]{2,63}$/;
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

/**
 * An MFA code: six digits, with spaces anywhere (spec: "Code accepts only digits and spaces"). One rule, given to the
 * field as its `pattern` (what a browser may check or show) and checked by the schema on both sides.
 */
export const MFA_CODE_PATTERN = "[ ]*(?:[0-9][ ]*){6}";
const MFA_CODE = new RegExp(`^(?:${MFA_CODE_PATTERN})$`);
export const mfaCode = z.string({ required_error: MESSAGES.code }).regex(MFA_CODE, MESSAGES.code);
/** A code is never sent back into its field: a refused one is typed again (a used or late one is worthless anyway). */
export const CODE_REPLY = { hideFields: ["code"] };

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

/**
 * Image metadata limits (the spec gives the keyword rules; the others are ours, stated in the form hints). A keyword
 * is 2 characters long or more and "less than 20 characters" (spec 1 §5: "2 to 20 characters (under 20)", and its
 * message for a longer one): at most 19, so the rule and its message agree.
 */
export const LIMITS = { title: 120, description: 2000, ocr: 10_000, keywords: 30, keywordMin: 2, keywordMax: 19 } as const;
const KEYWORD_SPECIAL = /[()&@*$|%~]/;
/** What the keyword fields say under them (image edit, upload, bulk Add keyword). */
export const KEYWORD_HINT = `Separate keywords with commas; each at least ${LIMITS.keywordMin} and less than ${LIMITS.keywordMax + 1} characters, without ( ) & @ * $ | % ~.`;

/** Keywords typed as one comma-separated string: trimmed, empty entries dropped, duplicates (any case) once. */
export const splitKeywords = (value: string): string[] => uniqueKeywords(value.split(","));

/** Keywords as a list (the API's): each trimmed, empty ones dropped, a duplicate (any case) kept as first written. */
export function uniqueKeywords(list: string[]): string[] {
  const seen = new Set<string>();
  return list.map((k) => k.trim().replace(/\s+/g, " ")).filter((k) => k && !seen.has(k.toLowerCase()) && seen.add(k.toLowerCase()));
}

/** The spec's first failing keyword rule, or null. */
export function keywordProblem(keywords: string[]): string | null {
  for (const k of keywords) {
    if (k.length > LIMITS.keywordMax)
      return `Keyword "${k.slice(0, LIMITS.keywordMax)}.." should be less than ${LIMITS.keywordMax + 1} characters`;
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
  rotate: z
    .enum(["0", "90", "180", "270"])
    .optional()
    .transform((v) => Number(v ?? 0)),
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
  return (
    base
      .replace(/\p{Cc}/gu, "")
      .trim()
      .slice(0, 255) || "image"
  );
}

/** A title from a file's name: the name without its extension. */
export const titleFromFileName = (name: string) =>
  cleanFileName(name)
    .replace(/\.[^.]+$/, "")
    .slice(0, LIMITS.title);

/** A typed confirmation: the field `confirm` must hold the word (spec: 'Please type DELETE to confirm'). */
/**
 * A typed confirmation: the field must hold `word` (trimmed). `empty` is what an empty field is told (the re-import's
 * 'Please enter the client name'); by default the same as a wrong word.
 */
export const typedConfirmation = (word: string, message = `Please type ${word} to confirm`, empty = message) =>
  z.object({
    confirm: z
      .string({ required_error: empty })
      .refine((v) => v.trim() !== "", empty)
      .refine((v) => v.trim() === "" || v.trim() === word, message),
  });

/** Re-import (spec 2 §5): the project's name typed exactly. */
export const REIMPORT_MESSAGES = {
  empty: "Please enter the client name",
  mismatch: "Client name does not match, Please try again",
  sent: "Re-import request sent",
  sentDetail: "the re-import process is now running in the background",
  failed: "Re-Import request failed",
  failedDetail: "Please try again",
} as const;
export const DELETE_WORD = "DELETE";
export const REMOVE_WORD = "REMOVE";
export const DeleteImageSchema = typedConfirmation(DELETE_WORD);
/** Remove from a board (one image or a selection): the typed REMOVE, and the client-level board's confirmation. */
export const RemoveImagesSchema = typedConfirmation(REMOVE_WORD).extend({ confirmShared: z.literal("yes").optional() });

/** Board and project names (spec 1 §5): required, not blank, 3 to 64 characters, none of ( ) & @ $ | % ~. */
export const NAME_SPECIAL = /[()&@$|%~]/;
export const BOARD_MESSAGES = {
  empty: "Board name cannot be empty",
  length: "Board name must be 3 to 64 characters",
  special: "Board name cannot contain ( ) & @ $ | % ~",
  exists: "Board name already exists",
  existsLong: "Board name already exists. Please choose another name",
  createFailed: "Failed to Create Board",
  renameFailed: "There was an error updating the board name",
} as const;

const nameRules = (messages: { empty: string; length: string; special: string }) =>
  z
    .string({ required_error: messages.empty })
    .transform((v) => v.trim().replace(/\s+/g, " "))
    .superRefine((v, ctx) => {
      const message = !v
        ? messages.empty
        : v.length < 3 || v.length > 64
          ? messages.length
          : NAME_SPECIAL.test(v)
            ? messages.special
            : null;
      if (message) ctx.addIssue({ code: "custom", message });
    });

export const BoardNameSchema = z.object({ title: nameRules(BOARD_MESSAGES) });
export const PROJECT_MESSAGES = {
  empty: "Project name cannot be empty",
  length: "Project name must be 3 to 64 characters",
  special: "Project name cannot contain ( ) & @ $ | % ~",
} as const;
export const ProjectNameSchema = z.object({ name: nameRules(PROJECT_MESSAGES) });
export const WSC_SOURCE_MAX = 2000;
export const WSC_MESSAGES = {
  sourceRequired: "A WSC project needs its source: the address of its manifest",
  sourceInvalid: "The source must be an http or https address",
  sourceLength: `The source cannot be longer than ${WSC_SOURCE_MAX} characters`,
} as const;
/** The project edit dialog (managers): its name, and whether it is a WSC project with the manifest it comes from. */
export const ProjectEditSchema = ProjectNameSchema.extend({
  wsc: z
    .literal("yes")
    .optional()
    .transform((v) => v === "yes"),
  source: z
    .string()
    .max(WSC_SOURCE_MAX, WSC_MESSAGES.sourceLength)
    .optional()
    .transform((v) => v?.trim() ?? "")
    .refine((v) => !v || (/^https?:\/\/[^\s]+$/i.test(v) && URL.canParse(v)), WSC_MESSAGES.sourceInvalid),
  keepGps: z
    .literal("yes")
    .optional()
    .transform((v) => v === "yes"),
  /** What the form showed (a hidden field): the setting changes only when the person changed the box. */
  keepGpsWas: z
    .literal("yes")
    .optional()
    .transform((v) => v === "yes"),
}).superRefine((v, ctx) => {
  if (v.wsc && !v.source) ctx.addIssue({ code: "custom", path: ["source"], message: WSC_MESSAGES.sourceRequired });
});

/** Add keyword (bulk): one or more keywords, comma-separated, with the edit form's rules and the spec's messages. */
export const KeywordsSchema = z.object({
  keywords: z
    .string({ required_error: "Please enter a keyword" })
    .max(2000)
    .transform((v) => splitKeywords(v))
    .superRefine((list, ctx) => {
      if (!list.length) ctx.addIssue({ code: "custom", message: "Please enter a keyword" });
      const problem = keywordProblem(list);
      if (problem) ctx.addIssue({ code: "custom", message: problem });
    }),
});

/** A row's id posted by a form, read as parseId reads one from a URL: digits, 1 to MAX_ID; anything else is invalid. */
export const formId = z.string().transform((v, ctx) => parseId(v) ?? (ctx.addIssue({ code: "custom", message: "Not an id" }), z.NEVER));

/** The spec's bulk download limit. */
export const MAX_DOWNLOAD = 100;
export const DOWNLOAD_LIMIT_MESSAGE = "You can only download 100 images at a time";

/** Add / Copy / Move: an existing board of the project, or "__new" with the new board's name. */
export const NEW_BOARD = "__new";
export const BulkTargetSchema = z.object({
  target: z.string({ required_error: "Please choose a board" }).min(1, "Please choose a board").max(64),
  newBoard: z.string().max(200).optional(),
  confirmShared: z.literal("yes").optional(),
});

/** Board sharing (spec 1 §5, spec 2): one address or a comma-separated list; the invalid one is named. */
export const SHARE_MESSAGES = {
  empty: "You need to write something!",
  invalid: "Please enter a valid email address!",
  failed: "Error sharing board",
  failedLong: "An error occurred while sharing the board. Please try again.",
} as const;
export const MAX_SHARE_RECIPIENTS = 50;

/** How long a share link lives: 7, 30 (the default) or 90 days, or until revoked. */
export const EXPIRY_CHOICES = ["7", "30", "90", "never"] as const;
export type ExpiryChoice = (typeof EXPIRY_CHOICES)[number];
export const DEFAULT_EXPIRY: ExpiryChoice = "30";

const shareOptions = {
  expiry: z.enum(EXPIRY_CHOICES).default(DEFAULT_EXPIRY),
  allowDownload: z.literal("on").optional(),
  showMetadata: z.literal("on").optional(),
};

export const ShareByEmailSchema = z.object({
  intent: z.literal("email"),
  emails: z
    .string({ required_error: SHARE_MESSAGES.empty })
    .max(5000)
    .transform((v) => [
      ...new Set(
        v
          .split(/[,;\n]/)
          .map((e) => e.trim().toLowerCase())
          .filter(Boolean),
      ),
    ])
    .superRefine((list, ctx) => {
      if (!list.length) return void ctx.addIssue({ code: "custom", message: SHARE_MESSAGES.empty });
      const bad = list.find((e) => e.length > 100 || !EMAIL_PATTERN.test(e));
      if (bad) ctx.addIssue({ code: "custom", message: `${SHARE_MESSAGES.invalid} “${bad.slice(0, 100)}” is not one.` });
      if (list.length > MAX_SHARE_RECIPIENTS)
        ctx.addIssue({ code: "custom", message: `At most ${MAX_SHARE_RECIPIENTS} addresses at a time.` });
    }),
  ...shareOptions,
});

export const ShareLinkSchema = z.object({
  intent: z.literal("link"),
  label: z
    .string({ required_error: "Please give the link a name (who or what it is for)." })
    .trim()
    .min(1, "Please give the link a name (who or what it is for).")
    .max(80, "At most 80 characters."),
  ...shareOptions,
});

/** A visitor's name for the review loop, and a review. */
export const VisitorNameSchema = z.object({
  intent: z.literal("name"),
  name: z.string({ required_error: "Please enter your name." }).trim().min(1, "Please enter your name.").max(60, "At most 60 characters."),
});
export const ReviewSchema = z.object({
  intent: z.literal("review"),
  mark: z.enum(["approved", "rejected", "none"]).optional(),
  comment: z.string().max(500, "A comment can be at most 500 characters.").optional(),
});
