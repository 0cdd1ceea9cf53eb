import { z } from "zod";
import { InvalidError } from "./errors";
import { EMAIL_PATTERN, mfaCode } from "./schemas";

/**
 * Forms of accounts: registration (spec 2 §5), the profile, the password, TOTP and the admin console. Shared by the
 * browser (Conform) and the server. Conform reads an empty field as missing, so every text is optional here and the
 * rules say what is owed.
 */
export const REGISTRATION_MESSAGES = {
  empty: "*Please fill in all fields",
  email: "*Invalid email format",
  mobile: "*Invalid mobile format",
} as const;

/** Spec 2 §5's maximum lengths (the others are ours: codes and names of the reference lists). */
export const REGISTRATION_LIMITS = { name: 50, surname: 50, email: 100, org_unit: 50, client: 50, sim_use: 255 } as const;

/** The mobile as typed, kept to digits: "821234567" or "82 123 4567" alike (as it is stored). */
export const mobileDigits = (value: string) => value.replace(/\D/g, "");
/**
 * A mobile as every place shows it (spec 2: "keeps digits only and formats them in groups of 2-3-4"): its digits,
 * grouped "82 123 4567". The one format: the field while it is typed and when the server gives it back, the confirm
 * step, the admin's view of an application and the profile. Digits past the ninth are kept (in the last group),
 * so a number that is too long is seen, and refused, rather than cut.
 */
export function formatMobile(value: string) {
  const d = mobileDigits(value);
  return [d.slice(0, 2), d.slice(2, 5), d.slice(5)].filter(Boolean).join(" ");
}
export const MOBILE_INPUT_LENGTH = 11;
/** Spec 2 §5: nine digits once the spaces are gone. The field's `pattern` and the schema's rule. */
export const MOBILE_PATTERN = "[ ]*(?:[0-9][ ]*){9}";
const MOBILE = new RegExp(`^(?:${MOBILE_PATTERN})$`);

const text = z.string().trim().optional();
const tooLong = (label: string, max: number) => `${label} cannot be longer than ${max} characters`;

/** Fields a profile shares with a registration; `reference` ids are checked against the database by the model. */
const personFields = {
  name: text,
  surname: text,
  mobile: text,
  country: text,
  timezone: text,
  language: text,
  org_unit: text,
};

function checkPerson(v: Record<string, string | undefined>, ctx: z.RefinementCtx, labels: [keyof typeof REGISTRATION_LIMITS, string][]) {
  for (const [key, label] of labels) {
    const value = v[key];
    if (value && value.length > REGISTRATION_LIMITS[key])
      ctx.addIssue({ code: "custom", path: [key], message: tooLong(label, REGISTRATION_LIMITS[key]) });
  }
  if (v.mobile && !MOBILE.test(v.mobile)) ctx.addIssue({ code: "custom", path: ["mobile"], message: REGISTRATION_MESSAGES.mobile });
}

export const REGISTRATION_FIELDS = [
  "name",
  "surname",
  "email",
  "country_code",
  "mobile",
  "country",
  "timezone",
  "org_unit",
  "language",
  "client",
  "sim_use",
] as const;

/**
 * The registration form. Every field filled, or one message for the form ('*Please fill in all fields'); then the
 * e-mail's and the mobile's own messages. `intent`: review (Submit: validate, then the confirm step), confirm (store
 * it), edit (back to the form from the confirm step). `website` is the honeypot.
 */
export const RegistrationSchema = z
  .object({
    intent: z.enum(["review", "confirm", "edit"]).default("review"),
    ...personFields,
    email: text,
    country_code: text,
    client: text,
    sim_use: text,
    website: z.string().optional(),
  })
  .superRefine((v, ctx) => {
    if (v.intent === "edit") return;
    if (REGISTRATION_FIELDS.some((f) => !v[f])) {
      ctx.addIssue({ code: "custom", path: [], message: REGISTRATION_MESSAGES.empty });
      return;
    }
    if (!EMAIL_PATTERN.test(v.email!)) ctx.addIssue({ code: "custom", path: ["email"], message: REGISTRATION_MESSAGES.email });
    checkPerson(v, ctx, [
      ["name", "Name"],
      ["surname", "Surname"],
      ["email", "Email"],
      ["org_unit", "Org unit"],
      ["client", "Projects"],
      ["sim_use", "What the system will be used for"],
    ]);
  });
export type RegistrationInput = Required<Omit<z.output<typeof RegistrationSchema>, "intent" | "website">>;

/** Profile settings: the registration's rules for the fields a person may change about themselves. */
export const ProfileSchema = z.object({ ...personFields }).superRefine((v, ctx) => {
  if (Object.values(v).some((value) => !value)) {
    ctx.addIssue({ code: "custom", path: [], message: REGISTRATION_MESSAGES.empty });
    return;
  }
  checkPerson(v, ctx, [
    ["name", "Name"],
    ["surname", "Surname"],
    ["org_unit", "Org unit"],
  ]);
});
export type ProfileInput = { [K in keyof z.output<typeof ProfileSchema>]-?: string };

export const PASSWORD_MIN = 12;
export const PASSWORD_MESSAGES = {
  current: "Please enter your current password.",
  short: `The new password must be at least ${PASSWORD_MIN} characters long.`,
  long: "The new password must be at most 256 characters long.",
  mismatch: "The two new passwords do not match.",
  common: "This password is too common. Please choose one that is harder to guess.",
  wrongCurrent: "The current password is not correct.",
} as const;

/** `current` is owed only when the account has a password already (the route says so with `hasPassword`). */
export const PasswordSchema = z
  .object({
    hasPassword: z.enum(["yes", "no"]),
    current: z.string().optional(),
    password: z
      .string({ required_error: PASSWORD_MESSAGES.short })
      .min(PASSWORD_MIN, PASSWORD_MESSAGES.short)
      .max(256, PASSWORD_MESSAGES.long),
    confirm: z.string({ required_error: PASSWORD_MESSAGES.mismatch }),
  })
  .superRefine((v, ctx) => {
    if (v.hasPassword === "yes" && !v.current) ctx.addIssue({ code: "custom", path: ["current"], message: PASSWORD_MESSAGES.current });
    if (v.password !== v.confirm) ctx.addIssue({ code: "custom", path: ["confirm"], message: PASSWORD_MESSAGES.mismatch });
  });

export const TotpCodeSchema = z.object({ code: mfaCode });

export const MEMBER_ROLES = ["viewer", "editor", "manager"] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];
export const isMemberRole = (value: unknown): value is MemberRole => (MEMBER_ROLES as readonly unknown[]).includes(value);

/** A posted project role; anything else is a bad request (400), not a role. */
export function memberRoleOf(value: unknown): MemberRole {
  if (!isMemberRole(value)) throw new InvalidError("Unknown role");
  return value;
}

/** Approving a registration: a role (or none) per project, as `role-<projectId>` fields. At least one project. */
export const APPROVE_MESSAGES = { none: "Choose at least one project and a role for it." } as const;
export function membershipsOf(form: FormData): { projectId: number; role: MemberRole }[] {
  // One role per project: a hand-made post naming a project twice keeps the last.
  const roles = new Map<number, MemberRole>();
  for (const [key, value] of form) {
    const m = /^role-(\d{1,9})$/.exec(key);
    if (m && isMemberRole(value)) roles.set(Number(m[1]), value);
  }
  return [...roles].map(([projectId, role]) => ({ projectId, role }));
}

/** A name as an applicant might type it: no case, accents or extra spaces. */
const looseName = (name: string) => name.normalize("NFKD").replace(/\p{M}/gu, "").toLowerCase().replace(/\s+/g, " ").trim();

/**
 * The projects an application asked for, read from its free-text "Projects" (spec 2: the applicant types it; the
 * public form lists no projects, so nothing about them is shown to strangers): the whole text, or each part of it
 * between commas, semicolons, "&", "+" or line breaks, that is a project's name (any case, accents and spacing).
 * The admin's page preselects these with the viewer role and names the parts that matched no project.
 */
export function projectsAskedFor(asked: string, projects: { id: number; name: string }[]) {
  const byName = new Map(projects.map((p) => [looseName(p.name), p.id]));
  const whole = byName.get(looseName(asked));
  if (whole !== undefined) return { ids: [whole], unmatched: [] as string[] };
  const ids = new Set<number>();
  const unmatched: string[] = [];
  for (const part of asked
    .split(/[,;&+\n]/)
    .map((p) => p.trim())
    .filter(Boolean)) {
    const id = byName.get(looseName(part));
    if (id === undefined) unmatched.push(part);
    else ids.add(id);
  }
  return { ids: [...ids], unmatched };
}

export const REJECT_REASON_MAX = 1000;
export const RejectSchema = z.object({
  reason: z.string().trim().max(REJECT_REASON_MAX, tooLong("The reason", REJECT_REASON_MAX)).optional(),
});

/** An id posted by a console form, as typed: the route reads it with parseId (not an id: not found). */
const postedId = z.string().max(20);
/** A membership's change: a role, or `remove`. */
const membershipChange = { role: z.enum(MEMBER_ROLES).optional(), remove: z.literal("yes").optional() };

/** The admin console's user page: one intent per form. */
export const AdminUserActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("membership"), project: postedId, ...membershipChange }),
  z.object({ intent: z.literal("role"), role: z.enum(["user", "admin"]) }),
  z.object({ intent: z.enum(["disable", "enable", "reset-totp", "send-link"]) }),
]);

/** The admin console's project page, but for its edit form (ProjectEditSchema, sent without an intent). */
export const AdminProjectActionSchema = z.discriminatedUnion("intent", [
  z.object({ intent: z.literal("logo"), logo: z.instanceof(File).optional() }),
  z.object({ intent: z.literal("logo-remove") }),
  z.object({ intent: z.literal("member-add"), email: z.string().trim().max(200), role: z.enum(MEMBER_ROLES) }),
  z.object({ intent: z.literal("member"), user: postedId, ...membershipChange }),
]);

/** A console form's fields read by its schema; anything else is a bad request (400) that changes nothing. */
/** The console's company sign-in page: a group's role in a project, added or removed. */
export const SSO_GROUP_MESSAGES = { group: "Please enter the group's name as the provider sends it." } as const;
export const SsoGroupRoleActionSchema = z.discriminatedUnion("intent", [
  z.object({
    intent: z.literal("group-add"),
    provider: z.string().max(32),
    group: z.string().trim().max(200).optional(),
    project: postedId,
    role: z.enum(MEMBER_ROLES),
  }),
  z.object({ intent: z.literal("group-remove"), id: postedId }),
]);

/** The console's company sign-in provider (services/oidc.server.ts checks the rest: URL, domains, uniqueness). */
export const SSO_PROVIDER_MESSAGES = {
  id: "Please enter an id: 1 to 32 lower-case letters or digits (it is part of the redirect URI).",
  name: "Please enter the name people see on the sign-in page.",
  issuer: "Please enter the provider's issuer URL.",
  clientId: "Please enter the client id the provider gave Koala.",
  domains: "Please enter the e-mail domains this provider signs in, separated by commas.",
  scopes: "The scopes must include openid.",
} as const;
export const SsoProviderSchema = z.object({
  id: z
    .string({ required_error: SSO_PROVIDER_MESSAGES.id })
    .trim()
    .toLowerCase()
    .regex(/^[a-z0-9]{1,32}$/, SSO_PROVIDER_MESSAGES.id),
  name: z.string({ required_error: SSO_PROVIDER_MESSAGES.name }).trim().max(60, tooLong("Name", 60)),
  issuer: z.string({ required_error: SSO_PROVIDER_MESSAGES.issuer }).trim().max(500, tooLong("Issuer", 500)),
  clientId: z.string({ required_error: SSO_PROVIDER_MESSAGES.clientId }).trim().max(500, tooLong("Client id", 500)),
  clientSecret: z.string().max(2000, tooLong("Client secret", 2000)).optional(),
  scopes: z
    .string()
    .trim()
    .max(500, tooLong("Scopes", 500))
    .optional()
    .refine((v) => !v || v.split(/\s+/).includes("openid"), SSO_PROVIDER_MESSAGES.scopes),
  groupsClaim: z.string().trim().max(100, tooLong("Groups claim", 100)).optional(),
  domains: z.string({ required_error: SSO_PROVIDER_MESSAGES.domains }).max(2000, tooLong("Domains", 2000)),
  ssoOnly: z.boolean().optional(),
  newUsers: z.enum(["create", "register", "refuse"]),
});

export function parseConsoleForm<S extends z.ZodTypeAny>(schema: S, form: FormData): z.output<S> {
  const parsed = schema.safeParse(Object.fromEntries(form));
  if (!parsed.success) throw new InvalidError("Data format error");
  return parsed.data;
}

/** Days a personal access token may live (the profile's choices). */
export const TOKEN_DAYS = ["7", "30", "90", "365"] as const;
export const TOKEN_MESSAGES = {
  name: "Give the token a name",
  nameLong: "Token name cannot be longer than 60 characters",
  projects: "Choose at least one project",
} as const;

/** A new personal access token (Profile → Access tokens): what it is for, read or write, where, how long. */
export const ApiTokenSchema = z
  .object({
    // Required below, with the projects' rule, so that a form missing both says both at once.
    name: z.string().trim().max(60, TOKEN_MESSAGES.nameLong).optional(),
    access: z.enum(["read", "write"]).default("read"),
    reach: z.enum(["all", "some"]).default("all"),
    projects: z.array(z.coerce.number().int().positive()).max(500).optional(),
    days: z.enum(TOKEN_DAYS).default("30"),
  })
  .superRefine((v, ctx) => {
    if (!v.name) ctx.addIssue({ code: "custom", path: ["name"], message: TOKEN_MESSAGES.name });
    if (v.reach === "some" && !v.projects?.length) ctx.addIssue({ code: "custom", path: ["projects"], message: TOKEN_MESSAGES.projects });
  });
