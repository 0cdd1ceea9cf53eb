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
