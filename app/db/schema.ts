import type { ColumnType, Generated, Insertable, Selectable, Updateable } from "kysely";

/**
 * Row types of every table. Conventions, the same on SQLite and PostgreSQL:
 * - times are integer milliseconds since the epoch (`*_at`);
 * - flags are integers 0/1 (one representation on both dialects);
 * - lists (keywords, job payloads, audit details) are JSON text.
 */
type Id = Generated<number>;
type Flag = number;

export interface UsersTable {
  id: Id;
  email: string;
  name: string;
  surname: string;
  mobile: string | null;
  country_code: string | null;
  timezone_id: number | null;
  language_code: string | null;
  org_unit_id: number | null;
  role: "user" | "admin";
  status: "pending" | "active" | "disabled";
  password_hash: string | null;
  totp_secret: string | null;
  totp_last_step: number | null;
  /** A secret shown for enrolment, until its first code confirms it (then it becomes totp_secret). */
  totp_pending_secret: string | null;
  terms_acknowledged_at: number | null;
  created_at: number;
  updated_at: number;
}

export interface SessionsTable {
  /** sha256 of the cookie's session id; the id itself is never stored. */
  id_hash: string;
  user_id: number;
  created_at: number;
  last_seen_at: number;
  expires_at: number;
  revoked_at: number | null;
  ip: string | null;
  user_agent: string | null;
  /** Company sign-in: the provider, its subject and its session id (`sid`), for a back-channel logout. */
  sso_provider: string | null;
  sso_subject: string | null;
  sso_sid: string | null;
}

/** A provider an admin added in the console; `domains` comma-separated; the secret sealed (lib/crypto.server.ts). */
export interface SsoProvidersTable {
  id: string;
  name: string;
  issuer: string;
  client_id: string;
  client_secret_sealed: string | null;
  scopes: string;
  groups_claim: string;
  domains: string;
  sso_only: Flag;
  new_users: "create" | "register" | "refuse";
  created_at: number;
  updated_at: number;
}

/** A provider's subject, and the account it signs in to. */
export interface SsoIdentitiesTable {
  provider: string;
  /** The provider's issuer when the link was made: a provider id given another issuer links nobody. */
  issuer: string;
  subject: string;
  user_id: number;
  /** The groups the provider last said the person is in (JSON array); null: it never said. */
  groups: string | null;
  created_at: number;
  last_sign_in_at: number;
}

/** A provider's group, and the role it gives in a project. */
export interface SsoGroupRolesTable {
  id: Id;
  provider: string;
  group_name: string;
  project_id: number;
  role: "viewer" | "editor" | "manager";
  created_at: number;
}

/** A value a provider sends once (a sign-in's state, a logout token's jti), by its hash, until it expires. */
export interface SsoUsedValuesTable {
  value_hash: string;
  expires_at: number;
}

/** A personal access token for the public API, kept as the SHA-256 of its secret (shown once, when made). */
export interface ApiTokensTable {
  id: Id;
  user_id: number;
  name: string;
  token_hash: string;
  /** 0: reads only; 1: also writes (within the owner's role). */
  can_write: Flag;
  /** The project ids it reaches (JSON array), or null: all of the owner's. */
  projects: string | null;
  expires_at: number;
  created_at: number;
  last_used_at: number | null;
  last_used_ip: string | null;
  revoked_at: number | null;
}

export interface SignInTokensTable {
  id: Id;
  user_id: number;
  /** magic_link: the e-mailed link; totp_challenge: a consumed link waiting for the code. */
  purpose: "magic_link" | "totp_challenge";
  token_hash: string;
  redirect_to: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
  /** totp_challenge after a company sign-in: the session's provider, subject and sid (JSON). */
  sso: string | null;
}

export interface RateLimitsTable {
  key: string;
  window_start: number;
  count: number;
}

export interface ProjectsTable {
  id: Id;
  name: string;
  logo_key: string | null;
  wsc: Flag;
  wsc_source: string | null;
  /** 1: images keep the GPS position their EXIF gives (the manager's choice); 0 (the default): it is never stored. */
  keep_gps: Generated<Flag>;
  created_at: number;
  updated_at: number;
}

export interface ProjectMembersTable {
  project_id: number;
  user_id: number;
  role: "viewer" | "editor" | "manager";
  created_at: number;
  /** The company sign-in provider whose groups gave this membership; null: given by hand (the groups leave it alone). */
  sso_provider: string | null;
}

export interface BoardsTable {
  id: string;
  project_id: number;
  title: string;
  cover_image_id: number | null;
  is_client_board: Flag;
  created_by: number | null;
  created_at: number;
  updated_at: number;
  /** When the board's owner last got the digest of new review activity (the review loop). */
  review_digest_at: number | null;
}

export interface BoardImagesTable {
  board_id: string;
  image_id: number;
  added_by: number | null;
  added_at: number;
}

export interface ImagesTable {
  id: Id;
  project_id: number;
  title: string;
  description: string;
  /** JSON array of strings. */
  keywords: string;
  ocr_text: string;
  /** 1: the OCR text was read from the picture by Koala (the OCR job); 0: a person wrote it, or there is none. */
  ocr_by_machine: Generated<Flag>;
  /** The preview key of the picture the machine last read (the OCR job); null: not known to have been read. */
  ocr_read_key: Generated<string | null>;
  /** When the photo was taken (EXIF), its wall clock in seconds as if UTC; 0: unknown. */
  taken_at: Generated<number>;
  /** The camera (EXIF Make and Model); "" when unknown. */
  camera_make: Generated<string>;
  camera_model: Generated<string>;
  /** Where it was taken (EXIF GPS), only in a project that keeps positions (projects.keep_gps). */
  gps_lat: number | null;
  gps_lon: number | null;
  /** Perceptual hashes, 16 hex digits (services/similarity.server.ts); null: stored before they were made. */
  phash: string | null;
  dhash: string | null;
  /** The DCT hash's 16-bit quarters, high to low, each indexed with the project (the near-duplicate lookup). */
  ph0: number | null;
  ph1: number | null;
  ph2: number | null;
  ph3: number | null;
  /** The image this one looked like when it was uploaded, until a person decides (Keep both); null: none. */
  dup_of: number | null;
  original_name: string;
  mime_type: string;
  storage_key: string;
  thumb_key: string;
  preview_key: string;
  size_bytes: number;
  width: number;
  height: number;
  checksum: string;
  rotation: number;
  version: number;
  created_by: number | null;
  created_at: number;
  updated_at: number;
}

export interface ImageVersionsTable {
  id: Id;
  image_id: number;
  version: number;
  title: string;
  description: string;
  keywords: string;
  ocr_text: string;
  rotation: number;
  storage_key: string;
  thumb_key: string;
  preview_key: string;
  /** JSON array of the field names that changed against the previous version. */
  changes: string;
  changed_by: number | null;
  changed_at: number;
}

export interface PendingUploadsTable {
  key: string;
  user_id: number;
  project_id: number;
  file_name: string;
  created_at: number;
  expires_at: number;
  image_id: number | null;
}

export interface AttributesTable {
  id: Id;
  project_id: number;
  name: string;
  code: string;
  active: Flag;
  /** 1 WSC imported, 2 system created, 3 user created (assignable to images). */
  type: 1 | 2 | 3;
  created_at: number;
  updated_at: number;
}

export interface ImageAttributeValuesTable {
  image_id: number;
  attribute_id: number;
  value: string;
  created_by: number | null;
  created_at: number;
}

/** Each image's attribute values folded into one key, refreshed by every write of values (migration 013). */
export interface ImageFacetsTable {
  image_id: number;
  project_id: number;
  /** JSON: [[attribute id, value], …] in attribute order. */
  facet_key: string;
}

export interface ShareLinksTable {
  id: Id;
  board_id: string;
  /** sha256 of the link's token; the token itself is only ever in the link. */
  token_hash: string;
  created_by: number | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  /** The e-mail address it was sent to, or null for a link made to paste somewhere (see label). */
  recipient: string | null;
  label: string | null;
  allow_download: Generated<Flag>;
  show_metadata: Generated<Flag>;
  last_opened_at: number | null;
  views: Generated<number>;
  downloads: Generated<number>;
}

/** A share-link visitor's mark (approved / rejected) and comment on one image, under the name they gave. */
export interface ShareReviewsTable {
  id: Id;
  link_id: number;
  image_id: number;
  /** Random, from the visitor's cookie of the link: two people on one link are two reviewers. */
  visitor_key: string;
  visitor_name: string;
  mark: "approved" | "rejected" | null;
  comment: string | null;
  created_at: number;
  updated_at: number;
}

export interface RegistrationsTable {
  id: Id;
  name: string;
  surname: string;
  email: string;
  country_code: string;
  mobile: string;
  country: string;
  timezone: string;
  utc_offset: number | null;
  org_unit: string;
  language: string;
  iso_code: string;
  client: string;
  sim_use: string;
  status: "submitted" | "approved" | "rejected";
  created_at: number;
  ip: string | null;
  decided_at: number | null;
  decided_by: number | null;
  /** The reason given with a rejection (it is e-mailed to the applicant). */
  reason: string | null;
  /** The account an approval made. */
  user_id: number | null;
}

export interface CountriesTable {
  code: string;
  name: string;
  dial_code: string;
}
export interface LanguagesTable {
  iso_code: string;
  name: string;
  status: "active" | "inactive";
  created_at: number;
  updated_at: number;
}
export interface TimezonesTable {
  id: Id;
  name: string;
  offset_hours: number;
}
export interface OrgUnitsTable {
  id: Id;
  name: string;
}

export interface DailyMediaTable {
  id: Id;
  kind: "image" | "video";
  url: string;
  position: number;
}

export interface AuditLogTable {
  id: Id;
  at: number;
  actor_user_id: number | null;
  action: string;
  subject: string | null;
  ip: string | null;
  /** JSON object; never holds secrets. */
  detail: string;
}

export interface JobsTable {
  id: Id;
  type: string;
  payload: string;
  status: "queued" | "running" | "done" | "failed";
  attempts: number;
  max_attempts: number;
  run_at: number;
  locked_at: number | null;
  locked_by: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  /** Work done so far, of `total` (long bulk actions). */
  progress: Generated<number>;
  total: number | null;
  /** JSON: what the job achieved, for the person who started it. */
  result: string | null;
  owner_user_id: number | null;
  /** A key no other job shares (a daily job's type and day), so that the same run is never queued twice. */
  unique_key: string | null;
  /** JSON: where a long job's next attempt resumes (what its earlier attempts committed); dropped when it is done. */
  checkpoint: string | null;
  /** The access token the job was started with through the API (only that token sees it there); null otherwise. */
  api_token_id: number | null;
}

/** Every object in storage that rows may refer to: `stored`, or `purging` while a purge deletes its bytes. */
export interface ObjectsTable {
  key: string;
  checksum: string;
  status: "stored" | "purging";
  updated_at: number;
}

/** An attribute export too large to attach: its stored CSV, whose it is, and until when its link works. */
export interface AttributeExportsTable {
  /** The SHA-256 of the link's random token (the token itself is only in the e-mail). */
  id: string;
  user_id: number;
  project_id: number;
  storage_key: string;
  file_name: string;
  size_bytes: number;
  created_at: number;
  expires_at: number;
}

/** Smart search: a tag's sentence-encoder vector (512 float32s), by folded tag. */
export interface TagVectorsTable {
  tag: string;
  vector: Uint8Array;
}

export interface Database {
  users: UsersTable;
  sessions: SessionsTable;
  sso_providers: SsoProvidersTable;
  sso_identities: SsoIdentitiesTable;
  sso_group_roles: SsoGroupRolesTable;
  sso_used_values: SsoUsedValuesTable;
  sign_in_tokens: SignInTokensTable;
  api_tokens: ApiTokensTable;
  rate_limits: RateLimitsTable;
  projects: ProjectsTable;
  project_members: ProjectMembersTable;
  boards: BoardsTable;
  board_images: BoardImagesTable;
  images: ImagesTable;
  image_versions: ImageVersionsTable;
  pending_uploads: PendingUploadsTable;
  attributes: AttributesTable;
  image_attribute_values: ImageAttributeValuesTable;
  image_facets: ImageFacetsTable;
  share_links: ShareLinksTable;
  share_reviews: ShareReviewsTable;
  registrations: RegistrationsTable;
  countries: CountriesTable;
  languages: LanguagesTable;
  timezones: TimezonesTable;
  org_units: OrgUnitsTable;
  daily_media: DailyMediaTable;
  audit_log: AuditLogTable;
  jobs: JobsTable;
  objects: ObjectsTable;
  tag_vectors: TagVectorsTable;
  attribute_exports: AttributeExportsTable;
}

export type User = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type UserUpdate = Updateable<UsersTable>;
export type Project = Selectable<ProjectsTable>;
export type Board = Selectable<BoardsTable>;
export type Image = Selectable<ImagesTable>;
export type Job = Selectable<JobsTable>;
export type Registration = Selectable<RegistrationsTable>;
export type AuditEntry = Selectable<AuditLogTable>;
export type { ColumnType };
