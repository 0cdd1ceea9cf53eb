import { config } from "~/config.server";
import { log } from "~/lib/log.server";
import { pruneJobs } from "~/models/jobs.server";
import { pruneRateLimits } from "~/models/rate-limits.server";
import { pruneSessions } from "~/models/sessions.server";
import { pruneSignInTokens } from "~/models/sign-in-tokens.server";
import { sweepExpiredUploads } from "./ingest.server";

/** Hourly clean-up of rows that can no longer be used. Safe to run on every instance at once. */
export function startHousekeeping(everyMs = 3_600_000): () => void {
  const run = async () => {
    const cfg = config();
    try {
      await pruneSessions({ idleMs: cfg.sessionIdleMs, maxMs: cfg.sessionMaxMs });
      await pruneSignInTokens();
      await pruneRateLimits(cfg.rateLimit.windowMs);
      await pruneJobs();
      await sweepExpiredUploads();
    } catch (err) {
      log.warn("housekeeping failed", { error: err instanceof Error ? err.message : String(err) });
    }
  };
  const timer = setInterval(run, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
