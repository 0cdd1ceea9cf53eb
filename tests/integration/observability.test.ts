import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createBoard } from "~/models/boards.server";
import { enqueueJob } from "~/models/jobs.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { defineJob, runOnce } from "~/services/jobs.server";
import { metricsText } from "~/services/metrics.server";
import { db } from "~/db/connection.server";
import { MAIL_JOB } from "~/lib/job-types";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { freePort, startAppServer, type AppServer } from "../helpers/server";

/**
 * Observability (issue 26): /metrics in Prometheus's text format behind METRICS_TOKEN (and on METRICS_PORT without
 * one), and one JSON access-log line per request with its request id (a trusted proxy's, or one made here and
 * echoed), route id, status, bytes and time, and never a share link's token.
 */
const TOKEN = "metrics-test-token-0123456789";
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const settled = { timeout: 10_000, interval: 50 };

interface Line {
  msg: string;
  level: string;
  instance?: string;
  requestId?: string;
  method?: string;
  route?: string;
  path?: string;
  status?: number;
  bytes?: number;
  ms?: number;
}
/** Every line the server wrote, each one JSON (a line that is not fails the test). */
const linesOf = (app: AppServer): Line[] =>
  app
    .output()
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Line);
const accessLines = (app: AppServer) => linesOf(app).filter((l) => l.msg === "request");
/** The access-log line for the request that was answered with this id. */
const lineFor = async (app: AppServer, requestId: string) => {
  await expect.poll(() => accessLines(app).some((l) => l.requestId === requestId), settled).toBe(true);
  return accessLines(app).find((l) => l.requestId === requestId)!;
};
/** A GET whose answer is read to its end; its status. */
const answered = async (url: string) => {
  const res = await fetch(url);
  await res.arrayBuffer();
  return res.status;
};
const scrape = (base: string, authorization?: string) =>
  fetch(`${base}/metrics`, { headers: authorization ? { Authorization: authorization } : {} });

describe.each(dialects)("observability (%s)", (dialect) => {
  let t: TestDatabase;
  let shareLink: string;
  let shareToken: string;
  let withMetrics: AppServer;
  let metricsPort: number;
  let untrusted: AppServer;

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    const e = await makeUser();
    const project = await makeProject([{ actor: e.actor }]);
    const scope = await projectScope(e.actor, project.id);
    const board = await boardScope(e.actor, (await createBoard(scope, { title: "Observed", imageIds: [] })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "observed");
    shareLink = link!.path;
    shareToken = shareLink.split(":").at(-1)!;
    metricsPort = await freePort();
    const logged = { ACCESS_LOG: "on", LOG_LEVEL: "info", INSTANCE_ID: "web-7" };
    [withMetrics, untrusted] = await Promise.all([
      startAppServer(t, { ...logged, METRICS_TOKEN: TOKEN, METRICS_PORT: String(metricsPort), TRUST_PROXY: "loopback" }),
      // No token: /metrics is any unknown path. A proxy list without loopback: the test's requests come from no proxy.
      startAppServer(t, { ...logged, TRUST_PROXY: "10.0.0.0/8" }),
    ]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([withMetrics?.stop(), untrusted?.stop()]);
    await t?.drop();
  });

  it("answers /metrics only with METRICS_TOKEN set and borne: 404 unset, 401 without or with a wrong one", async () => {
    expect((await scrape(untrusted.base)).status).toBe(404);
    expect((await scrape(untrusted.base, `Bearer ${TOKEN}`)).status).toBe(404);
    const missing = await scrape(withMetrics.base);
    expect(missing.status).toBe(401);
    expect(missing.headers.get("www-authenticate")).toMatch(/^Bearer/);
    expect((await scrape(withMetrics.base, `Bearer ${TOKEN}x`)).status).toBe(401);
    expect((await scrape(withMetrics.base, `Bearer ${TOKEN.slice(0, -1)}`)).status).toBe(401);
    expect((await scrape(withMetrics.base, TOKEN)).status).toBe(401);
    const ok = await scrape(withMetrics.base, `Bearer ${TOKEN}`);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(ok.headers.get("cache-control")).toBe("no-store");
  });

  it("counts requests by route id and status, reports the job queue, admission, the pool and Node's own metrics", async () => {
    // Each body read whole: a request is counted once its answer has ended.
    expect(await answered(`${withMetrics.base}/login`)).toBe(200);
    expect(await answered(`${withMetrics.base}/healthz`)).toBe(200);
    const queued = await enqueueJob(MAIL_JOB, { to: "nobody@example.com" });
    await db()
      .updateTable("jobs")
      .set({ run_at: Date.now() - 90_000 })
      .where("id", "=", queued)
      .execute();
    const text = await (await scrape(withMetrics.base, `Bearer ${TOKEN}`)).text();
    expect(text).toMatch(/^koala_http_requests_total\{route="routes\/_auth\+\/login",status="200"\} 1$/m);
    expect(text).toMatch(/^koala_http_requests_total\{route="healthz",status="200"\} \d+$/m);
    expect(text).toMatch(/^koala_http_request_duration_seconds_bucket\{le="\+Inf",route="routes\/_auth\+\/login",status="200"\} 1$/m);
    expect(text).toMatch(/^koala_job_queue_depth\{type="mail\.send"\} 1$/m);
    const oldest = Number(/^koala_job_queue_oldest_age_seconds\{type="mail\.send"\} (\S+)$/m.exec(text)?.[1]);
    expect(oldest).toBeGreaterThanOrEqual(90);
    expect(oldest).toBeLessThan(600);
    expect(text).toMatch(/^koala_job_queue_depth\{type="bulk\.action"\} 0$/m);
    expect(text).toMatch(/^koala_admission_queue_depth 0$/m);
    expect(text).toMatch(/^koala_admission_refused_total\{reason="queue_full"\} 0$/m);
    expect(text).toMatch(/^koala_render_memo_lookups_total\{result="hit"\} \d+$/m);
    expect(text).toMatch(/^koala_job_failures_total\{type="mail\.send"\} 0$/m);
    expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds \S+$/m);
    expect(text).toMatch(/^process_resident_memory_bytes \d+$/m);
    expect(text).toMatch(/^nodejs_heap_size_used_bytes \d+$/m);
    if (dialect === "postgres") expect(text).toMatch(/^koala_db_pool_in_use \d+$/m);
    else expect(text).not.toMatch(/koala_db_pool/);
    // No raw URL is a label: the share link's request is counted under its route id.
    expect(await answered(`${withMetrics.base}${shareLink}?q=1`)).toBe(200);
    const after = await (await scrape(withMetrics.base, `Bearer ${TOKEN}`)).text();
    expect(after).not.toContain(shareToken);
    expect(after).toMatch(/route="(routes\/_shared-board\+\/shared-board\.\$sharedUrl|shared-page)",status="200"/);
  });

  it("serves /metrics on METRICS_PORT without a token, and nothing else there", async () => {
    const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^koala_http_requests_total\{/m);
    expect((await fetch(`http://127.0.0.1:${metricsPort}/login`)).status).toBe(404);
  });

  it("counts job failures and retries in the runner", async () => {
    await db().deleteFrom("jobs").execute();
    const failing = { [MAIL_JOB]: defineJob(() => Promise.reject(new Error("the mail server said no"))) };
    await enqueueJob(MAIL_JOB, {}, { maxAttempts: 1 });
    await enqueueJob(MAIL_JOB, {}, { maxAttempts: 3 });
    const before = await metricsText();
    const count = (body: string, name: string) => Number(new RegExp(`^${name}\\{type="mail\\.send"\\} (\\d+)$`, "m").exec(body)?.[1]);
    while (await runOnce(failing, "observability-test"));
    const after = (await metricsText()).body;
    expect(count(after, "koala_job_failures_total") - count(before.body, "koala_job_failures_total")).toBe(1);
    expect(count(after, "koala_job_retries_total") - count(before.body, "koala_job_retries_total")).toBe(1);
    await db().deleteFrom("jobs").execute();
  });

  it("logs one JSON line per request with the trusted proxy's request id, echoed in X-Request-Id", async () => {
    const res = await fetch(`${withMetrics.base}/login`, { headers: { "X-Request-Id": "edge-42.a_b" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-request-id")).toBe("edge-42.a_b");
    const body = await res.arrayBuffer();
    const line = await lineFor(withMetrics, "edge-42.a_b");
    expect(line).toMatchObject({
      level: "info",
      instance: "web-7",
      method: "GET",
      route: "routes/_auth+/login",
      path: "/login",
      status: 200,
    });
    expect(line.bytes).toBeGreaterThan(0);
    expect(line.bytes).toBeLessThanOrEqual(body.byteLength);
    expect(line.ms).toBeGreaterThan(0);
    // An id that is not a plain token of at most 128 characters is not taken, even from a trusted proxy.
    for (const sent of ["two words", "x".repeat(129), "a%C3%A9b", "a/b", ""]) {
      const replaced = await fetch(`${withMetrics.base}/healthz`, { headers: { "X-Request-Id": sent } });
      const id = replaced.headers.get("x-request-id")!;
      expect(id).toMatch(UUID);
      expect((await lineFor(withMetrics, id)).route).toBe("healthz");
    }
    expect(linesOf(withMetrics).some((l) => l.msg.startsWith("Koala is listening"))).toBe(true);
  });

  it("makes a request id when the request came through no trusted proxy, and echoes it", async () => {
    const res = await fetch(`${untrusted.base}/login`, { headers: { "X-Request-Id": "edge-42" } });
    const id = res.headers.get("x-request-id")!;
    expect(id).toMatch(UUID);
    const line = await lineFor(untrusted, id);
    expect(line).toMatchObject({ route: "routes/_auth+/login", status: 200, instance: "web-7" });
    expect(accessLines(untrusted).some((l) => l.requestId === "edge-42")).toBe(false);
    const other = await fetch(`${untrusted.base}/login`);
    expect(other.headers.get("x-request-id")).toMatch(UUID);
    expect(other.headers.get("x-request-id")).not.toBe(id);
  });

  it("never logs a share link's token nor a query string", async () => {
    for (const path of [
      shareLink,
      `${shareLink}?secret=letmein`,
      `${shareLink}/image/1`,
      `${shareLink}/zip`,
      `/shared-media/${shareLink.split("/").at(-1)}/1/x`,
    ])
      await answered(`${withMetrics.base}${path}`);
    // Refused before any route (a body of a type no form sends): its warning line masks the token too.
    const refused = await fetch(`${withMetrics.base}${shareLink}/zip`, {
      method: "POST",
      headers: { "Content-Type": "text/plain" },
      body: "x",
    });
    expect(refused.status).toBe(415);
    // A line is written once its answer has ended, which may be a moment after the client has read it.
    await expect.poll(() => accessLines(withMetrics).some((l) => l.route === "shared-media"), settled).toBe(true);
    const output = withMetrics.output();
    expect(output).not.toContain(shareToken);
    expect(output).not.toContain("letmein");
    const shared = accessLines(withMetrics).filter((l) => l.path?.startsWith("/shared-"));
    expect(new Set(shared.map((l) => l.path))).toEqual(
      new Set(["/shared-board/[token]", "/shared-board/[token]/image/1", "/shared-board/[token]/zip", "/shared-media/[token]/1/x"]),
    );
    expect(shared.map((l) => l.route)).toContain("routes/_shared-board+/shared-board.$sharedUrl");
    // The same page again, answered by the shared-page front from its cache, ahead of Express: counted under its label.
    for (let i = 0; i < 3; i++) await answered(`${withMetrics.base}${shareLink}`);
    await expect.poll(() => accessLines(withMetrics).filter((l) => l.route === "shared-page").length, settled).toBeGreaterThan(0);
    expect(accessLines(withMetrics).find((l) => l.route === "shared-page")!.path).toBe("/shared-board/[token]");
    // A request that failed is named by its id on its error line too (the ZIP of an empty board fails today).
    const ids = new Set(accessLines(withMetrics).map((l) => l.requestId));
    for (const failed of linesOf(withMetrics).filter((l) => l.msg === "request failed")) expect(ids).toContain(failed.requestId);
    const refusal = linesOf(withMetrics).find((l) => l.msg === "request refused" && l.path === "/shared-board/[token]/zip");
    expect(refusal?.requestId).toBe(refused.headers.get("x-request-id"));
  });
});
