/** The people the e2e run seeds: one per scenario and browser project, so tests never share a TOTP step or a rate limit. */
export const PASSWORD = "e2e-password-123";
export const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
export const PROJECTS = ["js", "nojs"] as const;
export type Scenario = keyof typeof SCENARIOS;
export const SCENARIOS = {
  link: { totp: false },
  linkTotp: { totp: true },
  password: { totp: true },
  replay: { totp: true },
  wrong: { totp: true },
  expired: { totp: false },
  reused: { totp: false },
  ratelimit: { totp: false },
  logout: { totp: true },
  redirect: { totp: true },
  theme: { totp: true },
  keyboard: { totp: true },
  watch: { totp: true },
  axe: { totp: true },
  media: { totp: true },
  terms: { totp: true },
  dashboard: { totp: true },
  boards: { totp: true },
  clients: { totp: true },
  paging: { totp: true },
  select: { totp: true },
  panel: { totp: true },
  notfound: { totp: true },
  fresh: { totp: true },
  outsider: { totp: true },
  uploadOne: { totp: true },
  uploadMany: { totp: true },
  uploadBad: { totp: true },
  uploadKeys: { totp: true },
  editMeta: { totp: true },
  rotate: { totp: true },
  deleteImg: { totp: true },
  uploadGuard: { totp: true },
} as const;
/** Scenarios whose user has not yet accepted the terms (everyone else has). */
export const TERMS_PENDING: Scenario[] = ["terms"];
/** Scenarios whose user is not a member of the e2e project. */
export const OUTSIDERS: Scenario[] = ["outsider"];
/** Scenarios that get a project of their own (named by uploadProject), holding one seeded image, so uploads and deletes never disturb other tests. */
export const OWN_PROJECT: Scenario[] = ["uploadOne", "uploadMany", "uploadBad", "uploadKeys", "editMeta", "rotate", "deleteImg"];
export const uploadProject = (scenario: Scenario, project: string) => `Uploads ${scenario} ${project}`;
export const emailFor = (scenario: Scenario, project: string) => `${scenario.toLowerCase()}-${project}@e2e.test`;
