/**
 * The people the e2e run seeds: one per scenario and browser project (js, nojs; js-pg, nojs-pg in the PostgreSQL
 * database), so tests never share a session, a TOTP step, a rate limit or a mailbox.
 */
export const PASSWORD = "e2e-password-123";
export const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
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
  watchAfter: { totp: true },
  watchDuring: { totp: true },
  axe: { totp: true },
  media: { totp: true },
  terms: { totp: true },
  dashboard: { totp: true },
  boards: { totp: true },
  clients: { totp: true },
  paging: { totp: true },
  select: { totp: true },
  panel: { totp: true },
  handoff: { totp: false },
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
  ocrRead: { totp: true },
  ocrOwn: { totp: true },
  capture: { totp: true },
  captureGps: { totp: true },
  captureDates: { totp: false },
  duplicates: { totp: true },
  uploadGuard: { totp: true },
  boardCrud: { totp: false },
  pin: { totp: false },
  boardRemove: { totp: false },
  bulkAdd: { totp: false },
  bulkMove: { totp: false },
  bulkRemove: { totp: false },
  bulkDelete: { totp: false },
  bulkKeywords: { totp: false },
  bulkDownload: { totp: false },
  bulkKeyboard: { totp: false },
  tick: { totp: false },
  share: { totp: false },
  shareRevoke: { totp: false },
  viewer: { totp: false },
  searchGrid: { totp: false },
  searchBulk: { totp: false },
  searchAll: { totp: false },
  searchShared: { totp: false },
  searchKeys: { totp: false },
  searchFilters: { totp: false },
  searchSmart: { totp: false },
  searchFresh: { totp: false },
  attrManage: { totp: false },
  attrAssign: { totp: false },
  attrBulk: { totp: false },
  attrExport: { totp: false },
  attrImport: { totp: false },
  attrImport2: { totp: false },
  reimport: { totp: false },
  admin: { totp: false },
  profile: { totp: false },
  profileKeys: { totp: false },
  totpEnrol: { totp: false },
  sessions: { totp: false },
  disabled: { totp: false },
  codeSignIn: { totp: true },
  codeProfile: { totp: true },
  codeEnrol: { totp: false },
  look: { totp: false },
  lookAdmin: { totp: false },
  lookTerms: { totp: false },
  termsKeys: { totp: false },
} as const;
/** Scenarios whose user has the global admin role (the admin console). */
export const ADMINS: Scenario[] = ["admin", "lookAdmin"];
/** Scenarios whose user has not yet accepted the terms (everyone else has). */
export const TERMS_PENDING: Scenario[] = ["terms", "lookTerms", "termsKeys"];
/** Scenarios whose user is not a member of the e2e project. */
export const OUTSIDERS: Scenario[] = ["outsider"];
/** Scenarios that get a project of their own (named by uploadProject), holding one seeded image, so uploads and deletes never disturb other tests. */
export const OWN_PROJECT: Scenario[] = [
  "fresh",
  "uploadOne",
  "uploadMany",
  "uploadBad",
  "uploadKeys",
  "editMeta",
  "rotate",
  "deleteImg",
  "ocrRead",
  "ocrOwn",
  "capture",
  "captureGps",
  "duplicates",
];
/** Of those, the scenarios whose user manages the project (its settings), not only edits it. */
export const OWN_PROJECT_MANAGERS: Scenario[] = ["captureGps"];
export const uploadProject = (scenario: Scenario, project: string) => `Uploads ${scenario} ${project}`;
/**
 * Scenarios that get a board workshop of their own: a project (named by boardsProject) with six images and the
 * boards Alpha (images 1–3), Beta (empty) and Client review (client-level, images 1–2), so board and bulk tests
 * never disturb each other.
 */
export const BOARD_PROJECT: Scenario[] = [
  "boardCrud",
  "pin",
  "boardRemove",
  "bulkAdd",
  "bulkMove",
  "bulkRemove",
  "bulkDelete",
  "bulkKeywords",
  "bulkDownload",
  "bulkKeyboard",
  "tick",
  "share",
  "shareRevoke",
  "searchGrid",
  "searchBulk",
  "searchAll",
  "searchShared",
  "searchKeys",
  "searchFilters",
  "searchSmart",
  "searchFresh",
  "attrManage",
  "attrAssign",
  "attrBulk",
  "attrExport",
  "attrImport",
  "attrImport2",
  "reimport",
  "look",
];
/** Workshop scenarios whose user manages the project (attributes are a manager's to change). */
export const WORKSHOP_MANAGERS: Scenario[] = ["searchFilters", "searchFresh", "attrManage", "reimport", "look"];
/** searchSmart's workshop keywords, by image (Workshop 1..6), on top of shelf / aisle. */
export const SMART_KEYWORDS = [["soda", "grocery aisle"], ["soda"], ["chocolate"], ["grocery aisle"], [], ["shopper"]];
/**
 * The look workshop's keywords, by image (Workshop 1..6), on top of shelf / aisle: five chips, enough to fill a
 * card's row and wrap (the UI tests: menus, skip links, chips, controls, every page's screenshots). Its project also
 * gets the searchFilters attributes and values, attributes up to 33 active and 2 inactive (35 rows), and a long list.
 */
export const LOOK_KEYWORDS = [
  ["frozen vegetables", "street market", "energy drink", "chocolate"],
  ["rose wine", "kefir", "festival", "crackers"],
  ["smoothie", "sachet", "honey", "tray"],
  ["craft beer", "potatoes", "ice lolly", "pot"],
  ["receipt", "billboard", "menu", "label"],
  ["poster", "window", "counter", "shopper"],
];
export const boardsProject = (scenario: Scenario, project: string) => `Boards ${scenario} ${project}`;
/** searchAll's second project (one image, "Second aisle"), so a search across projects has two to find. */
export const secondProject = (project: string) => `Second search ${project}`;
/** searchFilters' attribute values on the workshop's images 1-6 (Channel, Region), and its project with a 32-value list. */
export const WORKSHOP_ATTRIBUTES = {
  Channel: ["Online", "Online", "Store", "Store", "Kiosk", null],
  Region: ["North", "South", "North", "South", "North", "South"],
} as const;
export const longListProject = (project: string, scenario: Scenario = "searchFilters") =>
  scenario === "searchFilters" ? `Long list ${project}` : `Long list ${scenario} ${project}`;
/** Scenarios whose user is a viewer of the e2e project. */
export const VIEWERS: Scenario[] = ["viewer"];
export const emailFor = (scenario: Scenario, project: string) => `${scenario.toLowerCase()}-${project}@e2e.test`;
