import { REGISTRATION_DIGEST_JOB, REVIEW_DIGEST_JOB } from "~/lib/job-types";
import { config } from "~/config.server";
import { getErrorMessage } from "~/lib/errors";
import { log } from "~/lib/log.server";
import { pruneJobs } from "~/models/jobs.server";
import { pruneRateLimits } from "~/models/rate-limits.server";
import { pruneSessions } from "~/models/sessions.server";
import { pruneSignInTokens } from "~/models/sign-in-tokens.server";
import { pruneUsedValues } from "~/models/sso.server";
import { sweepExpiredExports } from "./attribute-export.server";
import { resumeStalledPurges, sweepExpiredUploads } from "./ingest.server";
import { ensureDailyJob } from "./jobs.server";
import { FileStorage, storage } from "./storage.server";
import { sweepTempFiles } from "./temp-files.server";

/** One round of clean-up of what can no longer be used. Safe to run on every instance at once. */
export async function runHousekeeping() {
  const cfg = config();
  await pruneSessions({ idleMs: cfg.sessionIdleMs, maxMs: cfg.sessionMaxMs });
  await pruneSignInTokens();
  await pruneUsedValues();
  await pruneRateLimits(cfg.rateLimit.windowMs);
  await pruneJobs();
  await sweepExpiredUploads();
  await resumeStalledPurges();
  await ensureDailyJob(REVIEW_DIGEST_JOB);
  await ensureDailyJob(REGISTRATION_DIGEST_JOB);
  await sweepExpiredExports();
  const store = storage();
  if (store instanceof FileStorage) await store.sweepTemporaryFiles();
  await sweepTempFiles();
}

/** Runs housekeeping every hour (and once a minute after start, for what a crash left behind). */
export function startHousekeeping(everyMs = 3_600_000): () => void {
  const run = () => {
    const started = Date.now();
    return runHousekeeping().then(
      () => log.info("housekeeping done", { ms: Date.now() - started }),
      (err: unknown) => log.warn("housekeeping failed", { error: getErrorMessage(err) }),
    );
  };
  const first = setTimeout(run, 60_000);
  const timer = setInterval(run, everyMs);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}
