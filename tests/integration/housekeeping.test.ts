import { existsSync, mkdirSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config } from "~/config.server";
import { db } from "~/db/connection.server";
import { sha256 } from "~/lib/crypto.server";
import { claimJob, completeJob, enqueueJob } from "~/models/jobs.server";
import { hitRateLimit } from "~/models/rate-limits.server";
import { revokeSession, startSession } from "~/models/sessions.server";
import { projectScope } from "~/models/scope.server";
import { issueMagicLink } from "~/models/sign-in-tokens.server";
import { runHousekeeping, startHousekeeping } from "~/services/housekeeping.server";
import { signUpload } from "~/services/ingest.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

describe.each(dialects)("housekeeping (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  const policy = () => ({ idleMs: config().sessionIdleMs, maxMs: config().sessionMaxMs });
  const sessionHashes = async () => (await db().selectFrom("sessions").select("id_hash").execute()).map((r) => r.id_hash);

  it("drops sessions past their expiry, idle too long or revoked, and keeps live ones", async () => {
    const { user } = await makeUser();
    const [live, expired, idle, revoked] = await Promise.all([1, 2, 3, 4].map(() => startSession(user.id, policy())));
    const set = (id: string, values: { expires_at?: number; last_seen_at?: number }) =>
      db().updateTable("sessions").set(values).where("id_hash", "=", sha256(id)).execute();
    await set(expired!, { expires_at: Date.now() - 1 });
    await set(idle!, { last_seen_at: Date.now() - policy().idleMs - 1000 });
    await revokeSession(revoked!);
    await runHousekeeping();
    const left = await sessionHashes();
    expect(left).toContain(sha256(live!));
    for (const gone of [expired!, idle!, revoked!]) expect(left).not.toContain(sha256(gone));
  });

  it("drops sign-in links a day after they expired, and keeps newer ones", async () => {
    const users = await Promise.all([1, 2, 3].map(() => makeUser()));
    const [live, lately, long] = await Promise.all(users.map(({ user }) => issueMagicLink(user.id, null)));
    const expire = (token: string, at: number) =>
      db().updateTable("sign_in_tokens").set({ expires_at: at }).where("token_hash", "=", sha256(token)).execute();
    await expire(lately!, Date.now() - HOUR);
    await expire(long!, Date.now() - DAY - HOUR);
    await runHousekeeping();
    const left = (await db().selectFrom("sign_in_tokens").select("token_hash").execute()).map((r) => r.token_hash);
    expect(left).toEqual(expect.arrayContaining([sha256(live!), sha256(lately!)]));
    expect(left).not.toContain(sha256(long!));
  });

  it("drops rate-limit windows that have ended, and keeps the current ones", async () => {
    const [old, current] = [`hk-old-${dialect}`, `hk-current-${dialect}`];
    await hitRateLimit(old, 5, config().rateLimit.windowMs);
    await hitRateLimit(current, 5, config().rateLimit.windowMs);
    await db()
      .updateTable("rate_limits")
      .set({ window_start: Date.now() - config().rateLimit.windowMs - 1000 })
      .where("key", "=", old)
      .execute();
    await runHousekeeping();
    const left = (await db().selectFrom("rate_limits").select("key").execute()).map((r) => r.key);
    expect(left).toContain(current);
    expect(left).not.toContain(old);
  });

  it("drops jobs done more than a week ago, and keeps recent, failed and waiting ones", async () => {
    const ids = {
      doneOld: await enqueueJob("hk", {}),
      doneRecent: await enqueueJob("hk", {}),
      failedOld: await enqueueJob("hk", {}),
      queuedOld: await enqueueJob("hk", {}),
    };
    for (const id of [ids.doneOld, ids.doneRecent]) {
      const claimed = await claimJob("hk-worker", ["hk"]);
      expect(claimed!.id).toBe(id);
      expect(await completeJob(claimed!)).toBe(true);
    }
    const age = (id: number, values: { status?: "failed"; updated_at: number }) =>
      db().updateTable("jobs").set(values).where("id", "=", id).execute();
    const weekAgo = Date.now() - 7 * DAY - HOUR;
    await age(ids.doneOld, { updated_at: weekAgo });
    await age(ids.failedOld, { status: "failed", updated_at: weekAgo });
    await age(ids.queuedOld, { updated_at: weekAgo });
    await runHousekeeping();
    const left = (await db().selectFrom("jobs").select("id").where("type", "=", "hk").execute()).map((r) => r.id);
    expect(left.sort((a, b) => a - b)).toEqual([ids.doneRecent, ids.failedOld, ids.queuedOld]);
  });

  it("drops expired uploads that were never registered, with their stored bytes, and keeps live ones", async () => {
    const { actor } = await makeUser();
    const project = await makeProject([{ actor }]);
    const scope = await projectScope(actor, project.id);
    const expired = (await signUpload(scope, "old.jpg")).key;
    const live = (await signUpload(scope, "new.jpg")).key;
    for (const key of [expired, live]) await storage().put(key, Buffer.from("partial upload"));
    await db()
      .updateTable("pending_uploads")
      .set({ expires_at: Date.now() - 1 })
      .where("key", "=", expired)
      .execute();
    await runHousekeeping();
    const left = (await db().selectFrom("pending_uploads").select("key").execute()).map((r) => r.key);
    expect(left).toContain(live);
    expect(left).not.toContain(expired);
    expect(await storage().size(expired)).toBeNull();
    expect(await storage().size(live)).toBe("partial upload".length);
  });

  it("removes temporary files a crashed write left behind (over an hour old), and keeps fresh ones", async () => {
    const dir = path.join(t.dataDir, "objects", ".tmp");
    mkdirSync(dir, { recursive: true });
    const stale = path.join(dir, "crashed.tmp");
    const fresh = path.join(dir, "writing.tmp");
    writeFileSync(stale, "half a file");
    writeFileSync(fresh, "a write in progress");
    const twoHoursAgo = (Date.now() - 2 * HOUR) / 1000;
    utimesSync(stale, twoHoursAgo, twoHoursAgo);
    await runHousekeeping();
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
  });

  it("removes files a crash left in DATA_DIR/tmp (over a day old), and keeps fresh ones and those of a queued or running job", async () => {
    const dir = path.join(t.dataDir, "tmp");
    mkdirSync(dir, { recursive: true });
    const running = await enqueueJob("test.tmp-running", {});
    const claimed = await claimJob("hk-worker", ["test.tmp-running"]);
    expect(claimed?.id).toBe(running);
    const waiting = await enqueueJob("test.tmp-waiting", {}, { runAt: Date.now() + DAY });
    const finished = await enqueueJob("test.tmp-done", {});
    await completeJob((await claimJob("hk-worker", ["test.tmp-done"]))!);
    const files = {
      upload: path.join(dir, "import-crashedupload.csv"),
      fresh: path.join(dir, "import-beingchecked.csv"),
      runningImport: path.join(dir, `import-job${running}-stillread.csv`),
      waitingExport: path.join(dir, `export-job${waiting}-retried.csv`),
      finishedExport: path.join(dir, `export-job${finished}-left.csv`),
      other: path.join(dir, "stray.txt"),
    };
    for (const file of Object.values(files)) writeFileSync(file, "id,Colour\n1,red\n");
    const twoDaysAgo = (Date.now() - 2 * DAY) / 1000;
    for (const file of [files.upload, files.runningImport, files.waitingExport, files.finishedExport, files.other])
      utimesSync(file, twoDaysAgo, twoDaysAgo);
    await runHousekeeping();
    const left = Object.fromEntries(Object.entries(files).map(([k, file]) => [k, existsSync(file)]));
    expect(left).toEqual({ upload: false, fresh: true, runningImport: true, waitingExport: true, finishedExport: false, other: false });
    // Once its job has finished, the file goes too.
    await completeJob(claimed!);
    await runHousekeeping();
    expect(existsSync(files.runningImport)).toBe(false);
    expect(existsSync(files.fresh)).toBe(true);
  });

  it("runs by itself on its interval", async () => {
    const { user } = await makeUser();
    const id = await startSession(user.id, policy());
    await db()
      .updateTable("sessions")
      .set({ expires_at: Date.now() - 1 })
      .where("id_hash", "=", sha256(id))
      .execute();
    const stop = startHousekeeping(50);
    try {
      await expect.poll(sessionHashes, { timeout: 10_000, interval: 50 }).not.toContain(sha256(id));
    } finally {
      stop();
    }
  });
});
