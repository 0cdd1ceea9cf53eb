import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { BatchedRateLimit, hitRateLimit } from "~/models/rate-limits.server";
import { revokeSession, revokeUserSessions, sessionUser, startSession } from "~/models/sessions.server";
import { consumeToken, issueMagicLink, peekToken } from "~/models/sign-in-tokens.server";
import { acceptTotpStep } from "~/models/users.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeUser } from "../helpers/fixtures";

const policy = { idleMs: 60 * 60_000, maxMs: 24 * 60 * 60_000 };

describe.each(dialects)("sign-in models (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  it("stores only a hash of the session id and finds the user by the id", async () => {
    const { user } = await makeUser();
    const id = await startSession(user.id, policy, { ip: "127.0.0.1", userAgent: "test" });
    expect(id.length).toBeGreaterThanOrEqual(43);
    const rows = await db().selectFrom("sessions").select("id_hash").where("user_id", "=", user.id).execute();
    expect(rows.map((r) => r.id_hash)).not.toContain(id);
    expect((await sessionUser(id, policy))?.id).toBe(user.id);
    expect(await sessionUser(`${id}x`, policy)).toBeNull();
  });

  it("ends sessions on logout, on idle expiry, on absolute expiry and for disabled users", async () => {
    const { user } = await makeUser();
    const a = await startSession(user.id, policy);
    await revokeSession(a);
    expect(await sessionUser(a, policy)).toBeNull();

    const b = await startSession(user.id, policy);
    await db()
      .updateTable("sessions")
      .set({ last_seen_at: Date.now() - policy.idleMs - 1 })
      .execute();
    expect(await sessionUser(b, policy)).toBeNull();

    const c = await startSession(user.id, policy);
    await db()
      .updateTable("sessions")
      .set({ expires_at: Date.now() - 1 })
      .where("user_id", "=", user.id)
      .execute();
    expect(await sessionUser(c, policy)).toBeNull();

    const d = await startSession(user.id, policy);
    await db().updateTable("users").set({ status: "disabled" }).where("id", "=", user.id).execute();
    expect(await sessionUser(d, policy)).toBeNull();
    await db().updateTable("users").set({ status: "active" }).where("id", "=", user.id).execute();
    expect((await sessionUser(d, policy))?.id).toBe(user.id);
    await revokeUserSessions(user.id);
    expect(await sessionUser(d, policy)).toBeNull();
  });

  it("a passive check does not count as activity", async () => {
    const { user } = await makeUser();
    const id = await startSession(user.id, policy);
    const old = Date.now() - 10 * 60_000;
    await db().updateTable("sessions").set({ last_seen_at: old }).where("user_id", "=", user.id).execute();
    expect((await sessionUser(id, policy, { touch: false }))?.id).toBe(user.id);
    const row = () => db().selectFrom("sessions").select("last_seen_at").where("user_id", "=", user.id).executeTakeFirstOrThrow();
    expect((await row()).last_seen_at).toBe(old);
    await sessionUser(id, policy);
    expect((await row()).last_seen_at).toBeGreaterThan(old);
  });

  it("uses a magic link once; a newer link voids the older; an expired one fails", async () => {
    const { user } = await makeUser();
    const first = await issueMagicLink(user.id, "/client/1");
    const second = await issueMagicLink(user.id, null);
    expect(await consumeToken(first, "magic_link")).toBeNull();
    const results = await Promise.all([consumeToken(second, "magic_link"), consumeToken(second, "magic_link")]);
    expect(results.filter(Boolean)).toEqual([{ userId: user.id, redirectTo: null, sso: null }]);

    const third = await issueMagicLink(user.id, "/x");
    expect(await consumeToken(third, "totp_challenge")).toBeNull(); // wrong purpose
    expect(await peekToken(third, "magic_link")).toEqual({ userId: user.id, redirectTo: "/x", sso: null });
    await db()
      .updateTable("sign_in_tokens")
      .set({ expires_at: Date.now() - 1 })
      .where("user_id", "=", user.id)
      .execute();
    expect(await consumeToken(third, "magic_link")).toBeNull();
    // Only hashes are stored.
    const hashes = await db().selectFrom("sign_in_tokens").select("token_hash").execute();
    expect(hashes.map((h) => h.token_hash)).not.toContain(third);
  });

  it("accepts a TOTP step once, and never an older one", async () => {
    const { user } = await makeUser();
    expect(await acceptTotpStep(user.id, 100)).toBe(true);
    expect(await acceptTotpStep(user.id, 100)).toBe(false);
    expect(await acceptTotpStep(user.id, 99)).toBe(false);
    const race = await Promise.all([acceptTotpStep(user.id, 101), acceptTotpStep(user.id, 101)]);
    expect(race.filter(Boolean)).toHaveLength(1);
  });

  it("counts rate-limit hits atomically in a window and starts a new window after it", async () => {
    const key = `test:${dialect}:${Math.random()}`;
    const hits = await Promise.all(Array.from({ length: 8 }, () => hitRateLimit(key, 5, 60_000)));
    expect(hits.map((h) => h.count).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(hits.filter((h) => !h.allowed)).toHaveLength(3);
    await db()
      .updateTable("rate_limits")
      .set({ window_start: Date.now() - 60_001 })
      .where("key", "=", key)
      .execute();
    const after = await hitRateLimit(key, 5, 60_000);
    expect(after).toMatchObject({ allowed: true, count: 1 });
  });

  const written = async (key: string) =>
    Number((await db().selectFrom("rate_limits").select("count").where("key", "=", key).executeTakeFirst())?.count ?? 0);

  it("counts a busy key in memory, writes it in batches, and stops one instance exactly at the limit", async () => {
    const key = `batched:${dialect}:${Math.random()}`;
    const limiter = new BatchedRateLimit();
    const at = Date.now();
    const first = [];
    for (let i = 0; i < 100; i++) first.push(await limiter.hit(key, 600, 60_000, at));
    expect(first.map((h) => h.count)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    // Far from the limit, batches of a fiftieth of it (12): most hits wrote nothing.
    expect(await written(key)).toBeGreaterThan(100 - 12);
    expect(await written(key)).toBeLessThan(100);
    const rest = [];
    for (let i = 0; i < 550; i++) rest.push(await limiter.hit(key, 600, 60_000, at + 10));
    expect(rest.filter((h) => h.allowed)).toHaveLength(500);
    expect(rest.at(-1)).toMatchObject({ allowed: false, count: 650 });
    expect(await written(key)).toBe(650);
    // A second later the batch is written even if it is not full; a new window starts afresh.
    await limiter.hit(key, 100_000, 60_000, at + 20);
    await limiter.hit(key, 100_000, 60_000, at + 1_100);
    expect(await written(key)).toBe(652);
    expect(await limiter.hit(key, 600, 60_000, at + 60_001)).toMatchObject({ allowed: true, count: 1 });
  });

  it("shares a batched limit between instances, overshooting by no more than their unwritten batches", async () => {
    const key = `shared:${dialect}:${Math.random()}`;
    const instances = [new BatchedRateLimit(), new BatchedRateLimit(), new BatchedRateLimit()];
    const at = Date.now();
    let allowed = 0;
    for (let i = 0; i < 900; i++) if ((await instances[i % 3]!.hit(key, 600, 60_000, at)).allowed) allowed++;
    expect(allowed).toBeGreaterThanOrEqual(600);
    expect(allowed).toBeLessThanOrEqual(600 + 3 * 12);
    // Hits at once on one instance near the limit: each is written, and the database's count decides.
    const near = `near:${dialect}:${Math.random()}`;
    const one = new BatchedRateLimit();
    for (let i = 0; i < 95; i++) await one.hit(near, 100, 60_000, at);
    const burst = await Promise.all(Array.from({ length: 10 }, () => one.hit(near, 100, 60_000, at)));
    expect(burst.filter((h) => h.allowed)).toHaveLength(5);
    expect(await written(near)).toBe(105);
  });

  it("stops one instance at the limit when many hits arrive at once, counting the hits still being written", async () => {
    const key = `flood:${dialect}:${Math.random()}`;
    const limiter = new BatchedRateLimit();
    const at = Date.now();
    await limiter.hit(key, 600, 60_000, at);
    const flood = await Promise.all(Array.from({ length: 800 }, () => limiter.hit(key, 600, 60_000, at + 5)));
    expect(flood.filter((h) => h.allowed)).toHaveLength(599);
    // Every hit reached the database in the end, allowed or not.
    await limiter.hit(key, 600, 60_000, at + 10);
    expect(await written(key)).toBe(802);
  });

  it("counts from memory only once the database has answered, and not after a write failed", async () => {
    const key = `failing:${dialect}:${Math.random()}`;
    const limiter = new BatchedRateLimit();
    const at = Date.now();
    await limiter.hit(key, 600, 60_000, at);
    await db().schema.alterTable("rate_limits").renameTo("rate_limits_away").execute();
    try {
      await expect(limiter.hit(key, 600, 60_000, at)).resolves.toMatchObject({ allowed: true }); // from memory
      for (let i = 0; i < 10; i++) await limiter.hit(key, 600, 60_000, at); // 11 hits pending: a batch is 12
      await expect(limiter.hit(key, 600, 60_000, at)).rejects.toThrow(); // the batch's write fails
      await expect(limiter.hit(key, 600, 60_000, at)).rejects.toThrow(); // and the next hit goes to the database again
      // A key whose first write failed is not counted from memory either.
      const fresh = new BatchedRateLimit();
      await expect(fresh.hit(`${key}:new`, 600, 60_000, at)).rejects.toThrow();
      await expect(fresh.hit(`${key}:new`, 600, 60_000, at)).rejects.toThrow();
    } finally {
      await db().schema.alterTable("rate_limits_away").renameTo("rate_limits").execute();
    }
  });
});
