import { config } from "~/config.server";

const levels = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof levels;

/** Keys whose values are never written to the log, at any depth. */
const SECRET_KEYS = /pass(word)?|secret|token|code|cookie|authorization|otp/i;

/**
 * Paths carry bearer tokens (share links `/shared-board/<board>:<token>`, sign-in links `/auth/<token>`, a company
 * sign-in's `?code=…&state=…`), and error
 * messages may quote them: a long run of token characters in a logged path, URL or error is masked. Ids, board ids
 * and words are shorter.
 */
const TOKEN_RUN = /[A-Za-z0-9_-]{24,}/g;
/** A company sign-in's callback carries the provider's one-time code and our state, whatever their shape. */
const OAUTH_PARAMS = /([?&](?:code|state|session_state)=)[^&#\s]*/g;
const PATH_KEYS = /^(path|url|error)$/i;
export const maskTokens = (path: string) => path.replace(OAUTH_PARAMS, "$1[token]").replace(TOKEN_RUN, "[token]");

export function redact(value: unknown, depth = 0): unknown {
  if (depth > 4 || value === null || typeof value !== "object") return value;
  if (value instanceof Error) return { name: value.name, message: value.message };
  if (Array.isArray(value)) return value.map((v) => redact(v, depth + 1));
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_KEYS.test(k) ? "[redacted]" : PATH_KEYS.test(k) && typeof v === "string" ? maskTokens(v) : redact(v, depth + 1),
    ]),
  );
}

/**
 * A log stream whose reader went away (`node build/server.js | shipper`, and the shipper stopped) fails every write with
 * EPIPE. That is the end of logging to it, not an error to log: logging it would write to the same closed pipe.
 * The listener also catches what other writers (the dev mail line, the demo seed) send to the same stream.
 */
const closed = new WeakSet<NodeJS.WriteStream>();
for (const stream of [process.stdout, process.stderr]) stream.on("error", () => closed.add(stream));

function write(level: Level, msg: string, fields?: Record<string, unknown>) {
  let min: Level = "info";
  let instance: string | undefined;
  try {
    ({ logLevel: min, instanceId: instance } = config());
  } catch {
    /* configuration not readable yet: keep the default */
  }
  if (levels[level] < levels[min]) return;
  // The instance last: a line reads as time, level, message and what it is about.
  const line = JSON.stringify({ t: new Date().toISOString(), level, msg, ...(redact(fields ?? {}) as object), instance });
  const stream = level === "error" || level === "warn" ? process.stderr : process.stdout;
  if (!closed.has(stream) && !stream.destroyed) stream.write(line + "\n");
}

export const log = {
  debug: (msg: string, f?: Record<string, unknown>) => write("debug", msg, f),
  info: (msg: string, f?: Record<string, unknown>) => write("info", msg, f),
  warn: (msg: string, f?: Record<string, unknown>) => write("warn", msg, f),
  error: (msg: string, f?: Record<string, unknown>) => write("error", msg, f),
};
