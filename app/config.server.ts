import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import path from "node:path";
import { z } from "zod";

/** MiB of its pages a SQLite connection keeps in memory, unless SQLITE_CACHE_MB says otherwise. */
export const SQLITE_CACHE_MB = 64;

/**
 * A PostgreSQL connection pool's settings (the PG_ variables): its connections at most; a statement's longest run
 * before the server cancels it (0: the server's own setting); how long a connection may sit idle before it is closed
 * (0: never); the longest wait for a connection, a new one or a free one of a full pool (0: no limit). The pool's
 * connections carry `application_name`, so that pg_stat_activity tells Koala's apart.
 */
export interface PgPoolSettings {
  max: number;
  statementTimeoutMs: number;
  idleTimeoutMs: number;
  connectTimeoutMs: number;
  applicationName: string;
}
export const PG_POOL_DEFAULTS: PgPoolSettings = {
  max: 10,
  statementTimeoutMs: 30_000,
  idleTimeoutMs: 10_000,
  connectTimeoutMs: 5_000,
  applicationName: "koala",
};

/**
 * Every setting the app reads from the environment, with its default.
 * The README's configuration table mirrors this file; keep them in step.
 */
const bool = (fallback: boolean) =>
  z
    .enum(["1", "0", "true", "false", "on", "off", "yes", "no", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? fallback : ["1", "true", "on", "yes"].includes(v)));
const int = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback);

const EnvSchema = z.object({
  NODE_ENV: z.string().optional(),
  /** production enforces a safe configuration; defaults to production whenever NODE_ENV is. */
  KOALA_ENV: z.enum(["production", "development"]).optional(),
  PORT: int(3000, 1),
  HOST: z.string().default("127.0.0.1"),
  APP_URL: z.string().url().optional(),
  DATA_DIR: z.string().default("./data"),
  DATABASE_URL: z.string().optional(),
  /**
   * PostgreSQL behind a pooler in transaction mode (PgBouncer): the database's direct address, for what needs a
   * session of its own (migrations, with their advisory lock; the job runners' LISTEN). Unset: DATABASE_URL.
   */
  DATABASE_DIRECT_URL: z.string().optional(),
  SESSION_SECRET: z.string().min(32, "SESSION_SECRET must be at least 32 characters").optional(),
  SESSION_IDLE_MINUTES: int(12 * 60, 1),
  SESSION_MAX_DAYS: int(30, 1),
  SMTP_URL: z.string().optional(),
  MAIL_FROM: z.string().default("Koala <no-reply@koala.local>"),
  /**
   * Which proxies in front of the app to believe about the client address (X-Forwarded-For): `false` (none),
   * a number of hops (`1`: the one proxy in front; `true` means 1), or a comma-separated list of proxy addresses or
   * subnets (`10.0.0.0/8, loopback`), as Express's `trust proxy` takes them.
   */
  TRUST_PROXY: z
    .string()
    .optional()
    .transform((v, ctx) => parseTrustProxy(v, ctx)),
  RATE_LIMIT_WINDOW_SECONDS: int(15 * 60, 1),
  RATE_LIMIT_PER_ADDRESS: int(5, 1),
  RATE_LIMIT_PER_IP: int(50, 1),
  REGISTRATIONS_PER_IP: int(5, 1),
  MAX_IMAGE_BYTES: int(50 * 1024 * 1024, 1),
  MAX_IMAGE_PIXELS: int(50_000_000, 1),
  /** Attribute exports up to this size go as an e-mail attachment; larger ones as an expiring download link. */
  EXPORT_ATTACH_MAX_BYTES: int(2 * 1024 * 1024, 0),
  EXPORT_LINK_DAYS: int(7, 1),
  /**
   * Host names (as written in a URL) a WSC re-import may fetch from although they resolve to a private, loopback or
   * link-local address: an intranet source, or the tests' local server; `host:port` allows that one origin only.
   * Every other such address is refused (SSRF).
   */
  WSC_ALLOWED_PRIVATE_HOSTS: z
    .string()
    .default("")
    .transform((v) =>
      v
        .split(",")
        .map((h) => h.trim().toLowerCase())
        .filter(Boolean),
    ),
  MAX_CONCURRENT_REQUESTS: int(16, 1),
  MAX_QUEUED_REQUESTS: int(256, 0),
  QUEUE_WAIT_SECONDS: int(5, 1),
  REQUEST_TIMEOUT_SECONDS: int(30, 1),
  /** A response whose client has taken none of its bytes for this long is cut (a reader that stopped reading). */
  RESPONSE_IDLE_SECONDS: int(60, 1),
  MAX_CONCURRENT_DOWNLOADS: int(32, 1),
  DOWNLOADS_PER_CLIENT: int(4, 1),
  DOWNLOADS_PER_LINK: int(8, 1),
  RENDER_CACHE_MB: int(32, 0),
  /** MiB of small stored objects (thumbnails, previews: content-addressed, never stale) kept in memory once sent; 0: none. */
  MEDIA_CACHE_MB: int(64, 0),
  SQLITE_CACHE_MB: int(SQLITE_CACHE_MB, 2),
  /** PostgreSQL: the pool's connections at most, per process (PgPoolSettings). */
  PG_POOL_MAX: int(PG_POOL_DEFAULTS.max, 1),
  /** PostgreSQL: a statement running longer is cancelled by the server; 0: none (the server's own setting). */
  PG_STATEMENT_TIMEOUT_MS: int(PG_POOL_DEFAULTS.statementTimeoutMs, 0),
  /** PostgreSQL: a connection idle this long is closed (the pool opens one again when needed); 0: never. */
  PG_IDLE_TIMEOUT_MS: int(PG_POOL_DEFAULTS.idleTimeoutMs, 0),
  /** PostgreSQL: the longest wait for a connection (a new one, or a free one of a full pool); 0: no limit. */
  PG_CONNECT_TIMEOUT_MS: int(PG_POOL_DEFAULTS.connectTimeoutMs, 0),
  S3_BUCKET: z.string().optional(),
  S3_REGION: z.string().default("us-east-1"),
  S3_ENDPOINT: z.string().url().optional(),
  S3_ACCESS_KEY_ID: z.string().optional(),
  S3_SECRET_ACCESS_KEY: z.string().optional(),
  S3_FORCE_PATH_STYLE: bool(true),
  /**
   * Who sends an image's bytes once the app has checked access: `off` (the app streams them), `x-accel` (files:
   * an `X-Accel-Redirect` to nginx's internal location MEDIA_ACCEL_PREFIX), `signed` (files: x-accel, and the
   * thumbnails a signed-in person's pages show carry a signature nginx checks itself, so it sends them without
   * asking the app; docs/decisions/0007) or `presigned` (S3: a redirect to a short-lived presigned GET URL). Downloads
   * (`?download`) stay on the app's path, where their limits hold.
   */
  MEDIA_OFFLOAD: z.enum(["off", "x-accel", "signed", "presigned"]).default("off"),
  /** `signed`: the secret shared with nginx's secure_link check (docs/deploy/nginx-signed-media.conf). */
  MEDIA_URL_SECRET: z
    .string()
    .regex(/^[\w-]{32,}$/, "MEDIA_URL_SECRET must be at least 32 letters, digits, - or _ (nginx reads it in a quoted string)")
    .optional(),
  MEDIA_ACCEL_PREFIX: z
    .string()
    .regex(/^\/[\w\-/]*\/$/, "MEDIA_ACCEL_PREFIX must be a path that starts and ends with /")
    .default("/_koala-objects/"),
  /** `signed`, `presigned`: how long a media URL stays valid; it is the same URL for half that time, so browsers can cache it. */
  MEDIA_URL_SECONDS: int(600, 60).pipe(z.number().max(604_800, "at most 604800 (a week: the longest a presigned URL may live)")),
  /** Smart search: `local` (offline, the default) or `openai` (an OpenAI-compatible chat API, the local one as fallback). */
  SMART_SEARCH_PROVIDER: z.enum(["local", "openai"]).default("local"),
  /** The local provider's sentence encoder (≈150 MB once loaded); off: the lexical and WordNet stages alone. */
  SMART_SEARCH_EMBEDDINGS: bool(true),
  SMART_SEARCH_BASE_URL: z.string().url().default("https://api.openai.com/v1"),
  SMART_SEARCH_API_KEY: z.string().optional(),
  SMART_SEARCH_MODEL: z.string().default("gpt-4o-mini"),
  SMART_SEARCH_TIMEOUT_SECONDS: int(8, 1),
  DEMO_SEED: z.enum(["auto", "off"]).default("auto"),
  /** Text read from each new image by OCR (tesseract.js, offline), in the background; off: none is read. */
  OCR: bool(true),
  /** OCR worker threads per instance (each holds ~100 MB per language while busy, and is let go after a minute idle). */
  OCR_CONCURRENCY: int(1, 1),
  /** The languages OCR reads, `+`-joined tesseract codes (`eng+deu`); each needs its `@tesseract.js-data/<code>` package. */
  OCR_LANGUAGES: z
    .string()
    .trim()
    .regex(/^[a-z_]{3,12}(\+[a-z_]{3,12})*$/, "OCR_LANGUAGES must be tesseract language codes joined by +, such as eng or eng+deu")
    .default("eng"),
  JOB_RUNNER: bool(true),
  /** A running job not renewed for this long is taken to belong to a dead worker and handed out again. */
  JOB_LEASE_SECONDS: int(60, 5),
  /** On SIGTERM: how long requests in flight (and running jobs) may take to finish before they are cut. */
  SHUTDOWN_GRACE_SECONDS: int(30, 0),
  LOG_LEVEL: z.enum(["debug", "info", "warn", "error"]).default("info"),
  /** One JSON line per request (at level info); default: on in production, off otherwise. */
  ACCESS_LOG: z
    .enum(["1", "0", "true", "false", "on", "off", "yes", "no", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? undefined : ["1", "true", "on", "yes"].includes(v))),
  /** This instance's name in the access log and on every log line; default `<hostname>-<pid>`. */
  INSTANCE_ID: z.string().trim().max(128).optional(),
  /** The bearer token /metrics asks for; unset: /metrics answers 404 (except on METRICS_PORT). */
  METRICS_TOKEN: z.string().min(16, "METRICS_TOKEN must be at least 16 characters").optional(),
  /** A separate listener (on HOST) answering /metrics without a token; unset: none. */
  METRICS_PORT: z.preprocess((v) => (v === "" ? undefined : v), z.coerce.number().int().min(1).max(65535).optional()),
  /** Company sign-in (OpenID Connect): the providers' ids, comma-separated; each is set by its OIDC_<ID>_* variables. */
  OIDC_PROVIDERS: z.string().default(""),
  /** The longest wait for a provider (discovery, the token exchange, its keys); past it the sign-in is refused. */
  OIDC_TIMEOUT_SECONDS: int(10, 1),
  /** How far a provider's clock may be off from ours when its tokens' times are checked. */
  OIDC_CLOCK_TOLERANCE_SECONDS: int(30, 0),
  /** Requests one personal access token may make per minute on the public API (/api/v1); past it, 429. */
  API_RATE_LIMIT_PER_MINUTE: int(600, 1),
});

export type Config = ReturnType<typeof loadConfig>;

export type TrustProxy = false | number | string[];
const PROXY_NAME = /^(loopback|linklocal|uniquelocal)$/;
const PROXY_ADDRESS = /^[0-9a-f.:]+(\/\d{1,3})?$/i;
function parseTrustProxy(value: string | undefined, ctx: z.RefinementCtx): TrustProxy {
  const v = (value ?? "").trim().toLowerCase();
  if (["", "false", "0", "off", "no"].includes(v)) return false;
  if (["true", "on", "yes"].includes(v)) return 1;
  if (/^\d{1,2}$/.test(v)) return Number(v);
  const list = v
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const bad = list.find((p) => !PROXY_NAME.test(p) && !PROXY_ADDRESS.test(p));
  if (bad)
    ctx.addIssue({
      code: "custom",
      message: `TRUST_PROXY: "${bad}" is not a hop count, an address, a subnet or loopback/linklocal/uniquelocal`,
    });
  return list;
}

export function loadConfig(env: Record<string, string | undefined> = process.env) {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new Error(`Invalid configuration:\n${lines.join("\n")}`);
  }
  const e = parsed.data;
  if (e.METRICS_PORT === e.PORT)
    throw new Error("Invalid configuration:\n  METRICS_PORT: must differ from PORT (it is a listener of its own)");
  if ((e.MEDIA_OFFLOAD === "x-accel" || e.MEDIA_OFFLOAD === "signed") && e.S3_BUCKET)
    throw new Error(`Invalid configuration:\n  MEDIA_OFFLOAD: ${e.MEDIA_OFFLOAD} serves files from DATA_DIR; with S3_BUCKET use presigned`);
  if (e.MEDIA_OFFLOAD === "signed" && !e.MEDIA_URL_SECRET)
    throw new Error(
      "Invalid configuration:\n  MEDIA_URL_SECRET: required with MEDIA_OFFLOAD=signed (the secret nginx checks signatures with)",
    );
  if (e.MEDIA_OFFLOAD === "presigned" && !e.S3_BUCKET)
    throw new Error("Invalid configuration:\n  MEDIA_OFFLOAD: presigned needs S3_BUCKET; with files under DATA_DIR use x-accel");
  const production = (e.KOALA_ENV ?? (e.NODE_ENV === "production" ? "production" : "development")) === "production";
  const dataDir = path.resolve(e.DATA_DIR);
  const problems: string[] = [];
  if (production && !e.SESSION_SECRET) problems.push("SESSION_SECRET is required in production");
  if (production && !e.SMTP_URL) problems.push("SMTP_URL is required in production");
  if (production && !e.APP_URL) problems.push("APP_URL is required in production (links in e-mails)");
  if (problems.length) throw new Error(`Unsafe configuration for production:\n  ${problems.join("\n  ")}`);
  const demo = e.DEMO_SEED === "auto" && !production;
  const pgPool: PgPoolSettings = {
    ...PG_POOL_DEFAULTS,
    max: e.PG_POOL_MAX,
    statementTimeoutMs: e.PG_STATEMENT_TIMEOUT_MS,
    idleTimeoutMs: e.PG_IDLE_TIMEOUT_MS,
    connectTimeoutMs: e.PG_CONNECT_TIMEOUT_MS,
  };
  const origin = ownOrigin(e.HOST, e.PORT);
  const oidcProviders = oidcProvidersFrom(e.OIDC_PROVIDERS, env, production);

  return {
    production,
    port: e.PORT,
    host: e.HOST,
    appUrl: (e.APP_URL ?? `http://localhost:${e.PORT}`).replace(/\/$/, ""),
    dataDir,
    database: databaseFrom(e.DATABASE_URL, dataDir, e.SQLITE_CACHE_MB, pgPool),
    /**
     * Where migrations run, and the job runners' LISTEN session: DATABASE_DIRECT_URL's server, with the same pool
     * settings; null: `database`.
     */
    migrationDatabase: e.DATABASE_DIRECT_URL ? databaseFrom(e.DATABASE_DIRECT_URL, dataDir, e.SQLITE_CACHE_MB, pgPool) : null,
    sessionSecret: e.SESSION_SECRET ?? devSecret(dataDir),
    sessionIdleMs: e.SESSION_IDLE_MINUTES * 60_000,
    sessionMaxMs: e.SESSION_MAX_DAYS * 86_400_000,
    smtpUrl: e.SMTP_URL,
    mailFrom: e.MAIL_FROM,
    trustProxy: e.TRUST_PROXY,
    rateLimit: {
      windowMs: e.RATE_LIMIT_WINDOW_SECONDS * 1000,
      perAddress: e.RATE_LIMIT_PER_ADDRESS,
      perIp: e.RATE_LIMIT_PER_IP,
      registrationsPerIp: e.REGISTRATIONS_PER_IP,
    },
    maxImageBytes: e.MAX_IMAGE_BYTES,
    maxImagePixels: e.MAX_IMAGE_PIXELS,
    attributeExport: { attachMaxBytes: e.EXPORT_ATTACH_MAX_BYTES, linkMs: e.EXPORT_LINK_DAYS * 86_400_000 },
    // The demo's WSC source is this server itself (services/demo.server.ts): allowed as that one origin, and only
    // while the demo is on; every other private address stays refused.
    wscAllowedPrivateHosts: demo ? [...e.WSC_ALLOWED_PRIVATE_HOSTS, new URL(origin).host] : e.WSC_ALLOWED_PRIVATE_HOSTS,
    /** Admission control (server/admission.mjs): what runs at once, what may wait and for how long, and the time limit. */
    admission: {
      concurrency: e.MAX_CONCURRENT_REQUESTS,
      queue: e.MAX_QUEUED_REQUESTS,
      waitMs: e.QUEUE_WAIT_SECONDS * 1000,
      timeoutMs: e.REQUEST_TIMEOUT_SECONDS * 1000,
    },
    responseIdleMs: e.RESPONSE_IDLE_SECONDS * 1000,
    /** Downloads running at once (lib/download-slots.server.ts): in all, per person or address, per share link. */
    downloads: { total: e.MAX_CONCURRENT_DOWNLOADS, perClient: e.DOWNLOADS_PER_CLIENT, perLink: e.DOWNLOADS_PER_LINK },
    /** Memoized page renders (web/render-memo.server.ts): MiB of HTML kept; 0 turns them off. */
    renderCacheMb: e.RENDER_CACHE_MB,
    mediaCacheMb: e.MEDIA_CACHE_MB,
    /** S3-compatible object storage when S3_BUCKET is set; files under DATA_DIR/objects otherwise. */
    s3: e.S3_BUCKET
      ? {
          bucket: e.S3_BUCKET,
          region: e.S3_REGION,
          endpoint: e.S3_ENDPOINT,
          accessKeyId: e.S3_ACCESS_KEY_ID,
          secretAccessKey: e.S3_SECRET_ACCESS_KEY,
          forcePathStyle: e.S3_FORCE_PATH_STYLE,
        }
      : undefined,
    /** Media offload (web/media.server.ts): the app checks access, nginx or S3 sends the bytes. */
    media: {
      offload: e.MEDIA_OFFLOAD,
      accelPrefix: e.MEDIA_ACCEL_PREFIX,
      urlMs: e.MEDIA_URL_SECONDS * 1000,
      urlSecret: e.MEDIA_URL_SECRET ?? null,
    },
    smartSearch: {
      provider: e.SMART_SEARCH_PROVIDER,
      embeddings: e.SMART_SEARCH_EMBEDDINGS,
      baseUrl: e.SMART_SEARCH_BASE_URL.replace(/\/$/, ""),
      apiKey: e.SMART_SEARCH_API_KEY,
      model: e.SMART_SEARCH_MODEL,
      timeoutMs: e.SMART_SEARCH_TIMEOUT_SECONDS * 1000,
    },
    demoSeed: e.DEMO_SEED,
    /**
     * The demo library is on (DEMO_SEED=auto outside production): it may be seeded, and this server serves its WSC
     * source under /demo-wsc/ at `ownOrigin`, where the server reaches itself (its own address and port).
     */
    demo: demo ? { ownOrigin: origin } : null,
    /** OCR of new images (services/ocr.server.ts): null when off. */
    ocr: e.OCR ? { concurrency: e.OCR_CONCURRENCY, languages: e.OCR_LANGUAGES.split("+") } : null,
    jobRunner: e.JOB_RUNNER,
    jobLeaseMs: e.JOB_LEASE_SECONDS * 1000,
    shutdownGraceMs: e.SHUTDOWN_GRACE_SECONDS * 1000,
    logLevel: e.LOG_LEVEL,
    accessLog: e.ACCESS_LOG ?? production,
    instanceId: e.INSTANCE_ID || `${hostname()}-${process.pid}`,
    /** Prometheus metrics (server/index.ts, services/metrics.server.ts): the bearer token and the separate port. */
    metrics: { token: e.METRICS_TOKEN, port: e.METRICS_PORT },
    /** Company sign-in (services/oidc.server.ts, docs/sso.md). */
    oidc: { providers: oidcProviders, timeoutSeconds: e.OIDC_TIMEOUT_SECONDS, clockToleranceSeconds: e.OIDC_CLOCK_TOLERANCE_SECONDS },
    /** The public API (app/routes/api.v1+/, docs/api.md). */
    api: { ratePerMinute: e.API_RATE_LIMIT_PER_MINUTE },
  };
}

/**
 * An OpenID Provider Koala signs people in with. `domains`: the e-mail domains it speaks for (an account is matched
 * or made only for an address in one of them); `ssoOnly`: those domains' people cannot use a password or an e-mailed
 * link; `newUsers`: a first sign-in makes the account (`create`) or is refused (`refuse`, the admins make accounts).
 */
/** A first company sign-in without an account: make it, send the person to the application form, or refuse. */
export type NewUsers = "create" | "register" | "refuse";
const NEW_USERS: NewUsers[] = ["create", "register", "refuse"];

export interface OidcProvider {
  id: string;
  name: string;
  issuer: string;
  clientId: string;
  clientSecret: string | null;
  scopes: string;
  groupsClaim: string;
  domains: string[];
  ssoOnly: boolean;
  newUsers: NewUsers;
}

const OIDC_ID = /^[a-z0-9]{1,32}$/;
const DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
/** A comma-separated list of domains as typed: trimmed, lower case, empty entries dropped. */
export const domainList = (value: string) =>
  value
    .split(",")
    .map((d) => d.trim().toLowerCase())
    .filter(Boolean);

/**
 * What is wrong with a provider's settings, field by field: the one set of rules for the environment's providers
 * and the console's. Empty when it may be used.
 */
export function oidcProviderProblems(
  p: Pick<OidcProvider, "id" | "issuer" | "clientId" | "domains">,
  production: boolean,
): { field: "id" | "issuer" | "clientId" | "domains"; message: string }[] {
  const problems: ReturnType<typeof oidcProviderProblems> = [];
  if (!OIDC_ID.test(p.id)) problems.push({ field: "id", message: "1 to 32 lower-case letters or digits" });
  // The console's address for a provider to be added is /admin/sign-in/providers/new.
  else if (p.id === "new") problems.push({ field: "id", message: '"new" is taken by the console' });
  try {
    const url = new URL(p.issuer);
    if (url.protocol !== "https:" && (production || url.protocol !== "http:"))
      problems.push({ field: "issuer", message: `must be an https:// URL${production ? "" : " (http:// only outside production)"}` });
  } catch {
    problems.push({ field: "issuer", message: "required, the provider's issuer URL" });
  }
  if (!p.clientId) problems.push({ field: "clientId", message: "required" });
  if (!p.domains.length) problems.push({ field: "domains", message: "required, the e-mail domains this provider signs in" });
  for (const d of p.domains) if (!DOMAIN.test(d)) problems.push({ field: "domains", message: `"${d}" is not a domain name` });
  return problems;
}

/** OIDC_PROVIDERS=acme,demo and each one's OIDC_ACME_ISSUER, OIDC_ACME_CLIENT_ID… (docs/configuration.md). */
function oidcProvidersFrom(list: string, env: Record<string, string | undefined>, production: boolean): OidcProvider[] {
  const ids = list
    .split(",")
    .map((id) => id.trim().toLowerCase())
    .filter(Boolean);
  const problems: string[] = [];
  const providers = ids.map((id): OidcProvider => {
    const key = (name: string) => `OIDC_${id.toUpperCase()}_${name}`;
    const value = (name: string) => env[key(name)]?.trim() || undefined;
    const newUsers = value("NEW_USERS") ?? "create";
    if (!NEW_USERS.includes(newUsers as NewUsers)) problems.push(`${key("NEW_USERS")}: create, register or refuse`);
    const flag = (name: string) => {
      const v = value(name) ?? "false";
      if (!["1", "0", "true", "false", "on", "off", "yes", "no"].includes(v)) problems.push(`${key(name)}: true or false`);
      return ["1", "true", "on", "yes"].includes(v);
    };
    const provider: OidcProvider = {
      id,
      name: (value("NAME") ?? id).slice(0, 60),
      issuer: value("ISSUER") ?? "",
      clientId: value("CLIENT_ID") ?? "",
      clientSecret: value("CLIENT_SECRET") ?? null,
      scopes: value("SCOPES") ?? "openid email profile",
      groupsClaim: value("GROUPS_CLAIM") ?? "groups",
      domains: domainList(value("DOMAINS") ?? ""),
      ssoOnly: flag("SSO_ONLY"),
      newUsers: NEW_USERS.includes(newUsers as NewUsers) ? (newUsers as NewUsers) : "create",
    };
    const names = { id: "OIDC_PROVIDERS", issuer: key("ISSUER"), clientId: key("CLIENT_ID"), domains: key("DOMAINS") };
    for (const problem of oidcProviderProblems(provider, production))
      problems.push(`${names[problem.field]}: ${problem.field === "id" ? `"${id}" must be ` : ""}${problem.message}`);
    return provider;
  });
  if (new Set(ids).size !== ids.length) problems.push("OIDC_PROVIDERS: an id is named twice");
  const claimed = providers.flatMap((p) => p.domains);
  if (new Set(claimed).size !== claimed.length) problems.push("OIDC_*_DOMAINS: a domain belongs to two providers");
  if (problems.length) throw new Error(`Invalid configuration:\n  ${problems.join("\n  ")}`);
  return providers;
}

/** Where this server reaches itself: its own address (loopback when it listens on every address) and port. */
function ownOrigin(host: string, port: number) {
  const address = ["", "0.0.0.0", "::", "[::]"].includes(host) ? "127.0.0.1" : host;
  return `http://${address.includes(":") && !address.startsWith("[") ? `[${address}]` : address}:${port}`;
}

/**
 * SQLite: the file, and the MiB of its pages a connection keeps in memory (`SQLITE_CACHE_MB`). PostgreSQL: the URL,
 * and the pool's settings (PG_POOL_DEFAULTS unless given).
 */
export type DatabaseConfig =
  { dialect: "sqlite"; file: string; cacheMb?: number } | { dialect: "postgres"; url: string; pool?: PgPoolSettings };

export function databaseFrom(url: string | undefined, dataDir: string, cacheMb?: number, pool?: PgPoolSettings): DatabaseConfig {
  const cache = cacheMb === undefined ? {} : { cacheMb };
  if (!url) return { dialect: "sqlite", file: path.join(dataDir, "koala.sqlite"), ...cache };
  if (/^postgres(ql)?:\/\//.test(url)) return { dialect: "postgres", url, ...(pool ? { pool } : {}) };
  if (url.startsWith("sqlite:")) return { dialect: "sqlite", file: path.resolve(url.slice("sqlite:".length)), ...cache };
  throw new Error("DATABASE_URL must start with postgres://, postgresql:// or sqlite:");
}

/** Outside production a secret is generated once and kept in DATA_DIR, so sessions survive restarts. */
function devSecret(dataDir: string): string {
  const file = path.join(dataDir, ".session-secret");
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    mkdirSync(dataDir, { recursive: true });
    const secret = randomBytes(32).toString("hex");
    writeFileSync(file, secret, { mode: 0o600 });
    return secret;
  }
}

let current: Config | undefined;
/** The process-wide configuration, read once. */
export function config(): Config {
  return (current ??= loadConfig());
}
/** Tests and the CLI may replace it. */
export function setConfig(next: Config) {
  current = next;
}
