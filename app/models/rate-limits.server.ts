import { sql } from "kysely";
import { db } from "~/db/connection.server";
import { TooManyRequestsError } from "~/lib/errors";

export interface RateLimitResult {
  allowed: boolean;
  count: number;
  retryAfterSeconds: number;
  /** When the current window began. */
  windowStart: number;
}

/**
 * Counts one hit against `key` in a fixed window and says whether it is within `limit`.
 * One upsert: atomic on both dialects, and shared by every app instance on the database.
 */
export async function hitRateLimit(key: string, limit: number, windowMs: number, hits = 1, now = Date.now()): Promise<RateLimitResult> {
  const expired = sql<boolean>`rate_limits.window_start <= ${now - windowMs}`;
  const row = await db()
    .insertInto("rate_limits")
    .values({ key, window_start: now, count: hits })
    .onConflict((oc) =>
      oc.column("key").doUpdateSet({
        count: sql`case when ${expired} then ${hits} else rate_limits.count + ${hits} end`,
        window_start: sql`case when ${expired} then ${now} else rate_limits.window_start end`,
      }),
    )
    .returning(["count", "window_start"])
    .executeTakeFirstOrThrow();
  const count = Number(row.count);
  const windowStart = Number(row.window_start);
  return {
    allowed: count <= limit,
    count,
    retryAfterSeconds: Math.max(1, Math.ceil((windowStart + windowMs - now) / 1000)),
    windowStart,
  };
}

interface Tally {
  windowStart: number;
  /** The window's count as the database last said (every instance's hits written until then). */
  counted: number;
  /** This instance's hits being written now. */
  writing: number;
  /** This instance's hits since, not written yet. */
  pending: number;
  writtenAt: number;
}

/**
 * A limit shared by every instance, as `hitRateLimit`, for keys hit often (an API token: hundreds of requests a
 * second): each hit is counted in memory and written in batches, so that most requests cost no write (on
 * PostgreSQL, a commit each). The batch is a fiftieth of the limit, and at least once a second; within the last
 * tenth of the limit every hit is written, so one instance stops exactly at the limit (hits being written count
 * too) and several overshoot by at most their unwritten batches (3 instances: 3 × 2% of it). A key is counted from
 * memory only after the database has answered for it once, and again after a write that failed.
 */
export class BatchedRateLimit {
  private tallies = new Map<string, Tally>();

  async hit(key: string, limit: number, windowMs: number, now = Date.now()): Promise<RateLimitResult> {
    let tally = this.tallies.get(key);
    if (tally && now - tally.windowStart >= windowMs) {
      this.tallies.delete(key);
      tally = undefined;
    }
    if (tally) {
      const seen = tally.counted + tally.writing + tally.pending + 1;
      if (seen <= limit - Math.ceil(limit / 10) && tally.pending + 1 < Math.ceil(limit / 50) && now - tally.writtenAt < 1000) {
        tally.pending += 1;
        const retryAfterSeconds = Math.max(1, Math.ceil((tally.windowStart + windowMs - now) / 1000));
        return { allowed: true, count: seen, retryAfterSeconds, windowStart: tally.windowStart };
      }
    }
    // Hits that arrive while this write is under way stay pending, for the next one.
    const hits = (tally?.pending ?? 0) + 1;
    if (tally) {
      tally.pending = 0;
      tally.writing += hits;
    }
    try {
      const result = await hitRateLimit(key, limit, windowMs, hits, now);
      const current = this.tallies.get(key);
      if (current && current.windowStart === result.windowStart) {
        // Writes may finish out of order: the count only grows within a window.
        current.counted = Math.max(current.counted, result.count);
        current.writing = Math.max(0, current.writing - (current === tally ? hits : 0));
        current.writtenAt = now;
      } else {
        if (!current) this.prune(now, windowMs);
        this.tallies.set(key, { windowStart: result.windowStart, counted: result.count, writing: 0, pending: 0, writtenAt: now });
      }
      const mine = this.tallies.get(key)!;
      return { ...result, count: Math.max(result.count, mine.counted + mine.writing + mine.pending) };
    } catch (error) {
      // Not counted from memory until the database answers again.
      if (tally) {
        tally.writing = Math.max(0, tally.writing - hits);
        tally.writtenAt = -Infinity;
      }
      throw error;
    }
  }

  /** Tallies of windows that are over, dropped once there are many (one per token used in the last window). */
  private prune(now: number, windowMs: number) {
    if (this.tallies.size < 10_000) return;
    for (const [key, t] of this.tallies) if (now - t.windowStart >= windowMs) this.tallies.delete(key);
  }
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
