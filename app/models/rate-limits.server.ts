import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { TooManyRequestsError } from "~/lib/errors";

export interface RateLimitResult {
  allowed: boolean;
  count: number;
  retryAfterSeconds: number;
}

/**
 * Counts one hit against `key` in a fixed window and says whether it is within `limit`.
 * One upsert: atomic on both dialects, and shared by every app instance on the database.
 */
export async function hitRateLimit(key: string, limit: number, windowMs: number): Promise<RateLimitResult> {
  const now = Date.now();
  const expired = sql<boolean>`rate_limits.window_start <= ${now - windowMs}`;
  const row = await db()
    .insertInto("rate_limits")
    .values({ key, window_start: now, count: 1 })
    .onConflict((oc) =>
      oc.column("key").doUpdateSet({
        count: sql`case when ${expired} then 1 else rate_limits.count + 1 end`,
        window_start: sql`case when ${expired} then ${now} else rate_limits.window_start end`,
      }),
    )
    .returning(["count", "window_start"])
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  return {
    allowed: count <= limit,
    count,
    retryAfterSeconds: Math.max(1, Math.ceil((Number(row.window_start) + windowMs - now) / 1000)),
  };
}

/** "Please wait 3 minutes and try again.": what every refusal over a limit tells the person. */
export function waitMessage(retryAfterSeconds: number) {
  const minutes = Math.ceil(retryAfterSeconds / 60);
  return `Please wait ${minutes} minute${minutes === 1 ? "" : "s"} and try again.`;
}

/** Counts one hit and refuses past the limit with 429: `what` opens the message ("Too many attempts."). */
export async function requireWithinLimit(key: string, limit: number, windowMs: number, what: string) {
  const hit = await hitRateLimit(key, limit, windowMs);
  if (!hit.allowed) throw new TooManyRequestsError(`${what} ${waitMessage(hit.retryAfterSeconds)}`, hit.retryAfterSeconds);
}

export async function pruneRateLimits(windowMs: number) {
  await db()
    .deleteFrom("rate_limits")
    .where("window_start", "<=", Date.now() - windowMs)
    .execute();
}
