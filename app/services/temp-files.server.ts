import { mkdir, readdir, rm, stat } from "node:fs/promises";
import path from "node:path";
import { config } from "~/config.server";
import { randomToken } from "~/lib/crypto.server";
import { pendingJobIds } from "~/models/jobs.server";

/**
 * Temporary files under DATA_DIR/tmp: an uploaded CSV while its request checks it, a job's copy of its file (an
 * import's CSV, an export being written). Their writer removes them; a process killed meanwhile leaves them, and
 * housekeeping sweeps those (sweepTempFiles).
 */
export const tempDir = () => path.join(config().dataDir, "tmp");

/** A job's file is named after it (`<kind>-job<id>-<token>.<ext>`), so the sweep keeps it while the job may still run. */
const JOB_FILE = /^[a-z]+-job(\d+)-/;

/** A new temporary file's path (the directory made): `kind` names what writes it, `jobId` the job it belongs to. */
export async function tempPath(kind: string, ext: string, jobId?: number) {
  const dir = tempDir();
  await mkdir(dir, { recursive: true });
  return path.join(dir, `${kind}-${jobId === undefined ? "" : `job${jobId}-`}${randomToken(12)}.${ext}`);
}

/**
 * Removes what a crash left in DATA_DIR/tmp: files unchanged for `olderThanMs` (a day: far longer than any request,
 * and a job's file is kept however old while its job is queued or running, since a retry or the worker itself may
 * still read it). Answers how many went. Safe on every instance at once.
 */
export async function sweepTempFiles(olderThanMs = 86_400_000): Promise<number> {
  const dir = tempDir();
  const names = await readdir(dir).catch(() => [] as string[]);
  const old: { file: string; jobId: number | null }[] = [];
  for (const name of names) {
    const file = path.join(dir, name);
    const info = await stat(file).catch(() => null);
    if (!info?.isFile() || Date.now() - info.mtimeMs <= olderThanMs) continue;
    const job = JOB_FILE.exec(name);
    old.push({ file, jobId: job ? Number(job[1]) : null });
  }
  const pending = await pendingJobIds(old.flatMap((f) => (f.jobId === null ? [] : [f.jobId])));
  let removed = 0;
  for (const { file, jobId } of old) {
    if (jobId !== null && pending.has(jobId)) continue;
    await rm(file, { force: true });
    removed += 1;
  }
  return removed;
}
