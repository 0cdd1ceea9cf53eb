import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { sql } from "kysely";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { REGISTRATION_DIGEST_JOB, REVIEW_DIGEST_JOB } from "~/lib/job-types";
import { gridThumbKey, mediaUrl } from "~/lib/media";
import { createAttribute } from "~/models/attributes.server";
import { createBoard } from "~/models/boards.server";
import { insertImage } from "~/models/images.server";
import { boardScope, projectScope } from "~/models/scope.server";
import { createShareLinks } from "~/models/share-links.server";
import { importUploadedCsv } from "~/services/attribute-import.server";
import { runBulk } from "~/services/bulk.server";
import { storage } from "~/services/storage.server";
import { freshDatabase, PG_URL, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { startNginx, type RunningNginx } from "../helpers/nginx";
import { startS3 } from "../helpers/s3";
import { freePort, pageText, startServer, type RunningServer } from "../helpers/server";
import { startSmtp } from "../helpers/smtp";
import { startTcpProxy } from "../helpers/tcp-proxy";

/**
 * Koala as an operator runs it (issue 26): two instances in production mode behind nginx with the documented site
 * configuration (docs/deploy/nginx.conf), one PostgreSQL database (reached through a forwarder the test can cut),
 * one S3 bucket (s3rver behind a front that checks presigned signatures, MEDIA_OFFLOAD=presigned) and a real SMTP
 * sink. Needs the production build, PostgreSQL and nginx (`.ci/run` installs nginx-light).
 */
const SESSION_SECRET = "instances-test-secret-0123456789abcdef0123456";
const METRICS_TOKEN = "instances-metrics-token-0123";
const LEASE_SECONDS = 5;
/** Images in the project the background jobs work on: enough that a job is still running when its instance dies. */
const MANY = 12_000;
/** The CSV import's attributes: five values a row make a file of MANY rows larger than the inline limit (a job). */
const COLUMNS = ["Region", "Channel", "Format", "Banner", "Aisle"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Name = "a" | "b";

describe.skipIf(!PG_URL)("two instances behind nginx, on PostgreSQL and S3", () => {
  let t: TestDatabase;
  let s3: Awaited<ReturnType<typeof startS3>>;
  let smtp: Awaited<ReturnType<typeof startSmtp>>;
  let database: Awaited<ReturnType<typeof startTcpProxy>>;
  let nginx: RunningNginx;
  const mails: string[] = [];
  const instances = {} as Record<Name, RunningServer>;
  const ports = {} as Record<Name, number>;
  const dataDirs = {} as Record<Name, string>;
  let projectId: number;
  let bigProjectId: number;
  let editor: Awaited<ReturnType<typeof makeUser>>;
  let shareZip: string;

  const envOf = (name: Name) => ({
    KOALA_ENV: "production",
    DATABASE_URL: t.url.replace(/@[^/]+\//, `@127.0.0.1:${database.port}/`),
    DATA_DIR: dataDirs[name],
    SESSION_SECRET,
    ...s3.env,
    MEDIA_OFFLOAD: "presigned",
    SMTP_URL: `smtp://127.0.0.1:${smtp.port}`,
    APP_URL: nginx.base,
    TRUST_PROXY: "loopback",
    INSTANCE_ID: `web-${name}`,
    JOB_LEASE_SECONDS: String(LEASE_SECONDS),
    METRICS_TOKEN,
    SHUTDOWN_GRACE_SECONDS: "20",
    LOG_LEVEL: "info",
  });
  const start = async (name: Name) => (instances[name] = await startServer(envOf(name), ports[name]));
  const exited = (name: Name) =>
    new Promise<number | null>((resolve) => {
      const { child } = instances[name];
      if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode);
      child.once("exit", (code) => resolve(code));
    });
  /** The access-log lines an instance wrote so far. */
  const requests = (name: Name) =>
    instances[name]
      .output()
      .split("\n")
      .filter((l) => l.includes('"msg":"request"'))
      .map((l) => JSON.parse(l) as { requestId: string; method: string; path: string; status: number; instance: string });

  beforeAll(async () => {
    s3 = await startS3();
    // The test process writes its fixtures to the same bucket the instances read.
    t = await freshDatabase("postgres", { SESSION_SECRET, ...s3.env });
    smtp = await startSmtp(mails);
    database = await startTcpProxy(5432);
    for (const name of ["a", "b"] as const) {
      ports[name] = await freePort();
      dataDirs[name] = mkdtempSync(path.join(tmpdir(), `koala-${name}-`));
    }
    nginx = await startNginx({ upstreamPorts: [ports.a, ports.b], objectsDir: path.join(dataDirs.a, "objects") });
    editor = await makeUser();
    const project = await makeProject([{ actor: editor.actor }]);
    projectId = project.id;
    const scope = await projectScope(editor.actor, projectId);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++) {
      const bytes = randomBytes(1_500_000);
      const file = { ...(await storedFakeFile(900 + i)), sizeBytes: bytes.length };
      await storage().put(file.storageKey, bytes);
      for (const key of [file.thumbKey, file.previewKey]) await storage().put(key, bytes.subarray(0, 100));
      ids.push(await insertImage(scope, file, meta(`Shelf ${i}`)));
    }
    const board = await boardScope(editor.actor, (await createBoard(scope, { title: "Shelves", imageIds: ids })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "zip");
    shareZip = `${link!.path}/zip`;

    // A project of MANY images for the background jobs: one real row and its version, copied in SQL.
    bigProjectId = (await makeProject([{ actor: editor.actor, role: "manager" }])).id;
    const big = await projectScope(editor.actor, bigProjectId);
    const first = await insertImage(big, await storedFakeFile(990), meta("Bay 0"));
    await cloneImage(first, MANY - 1);
    for (const name of COLUMNS) await createAttribute(big, { name, code: name.slice(0, 3).toLowerCase(), type: 3 });

    await Promise.all([start("a"), start("b")]);
  }, 240_000);

  afterAll(async () => {
    for (const name of ["a", "b"] as const) instances[name]?.child.kill("SIGKILL");
    await nginx?.stop();
    await database?.close();
    await smtp?.close();
    await s3?.stop();
    await t?.drop();
    for (const dir of Object.values(dataDirs)) rmSync(dir, { recursive: true, force: true });
  });

  /** `count` copies of an image row and its first version, 2,000 a statement (the columns read from the catalog). */
  async function cloneImage(id: number, count: number) {
    for (let from = 1; from <= count; from += 2_000) await cloneRows(id, from, Math.min(count, from + 1_999));
    await sql`analyze images`.execute(db());
  }
  async function cloneRows(id: number, from: number, to: number) {
    for (const table of ["images", "image_versions"] as const) {
      const columns = (
        await sql<{ column_name: string }>`select column_name from information_schema.columns
          where table_schema = current_schema() and table_name = ${table} order by ordinal_position`.execute(db())
      ).rows.map((r) => r.column_name);
      const list = (cols: string[]) => sql.join(cols.map((c) => sql.ref(c)));
      if (table === "images") {
        const copied = columns.filter((c) => c !== "id" && c !== "title");
        await sql`insert into images (${list(copied)}, title)
          select ${list(copied.map((c) => `i.${c}`))}, 'Bay ' || n from images i, generate_series(${from}::int, ${to}::int) n where i.id = ${id}`.execute(
          db(),
        );
      } else {
        const copied = columns.filter((c) => c !== "id" && c !== "image_id");
        await sql`insert into image_versions (${list(copied)}, image_id)
          select ${list(copied.map((c) => `v.${c}`))}, i.id from image_versions v, images i
          where v.image_id = ${id} and i.project_id = (select project_id from images where id = ${id})
            and not exists (select 1 from image_versions w where w.image_id = i.id)`.execute(db());
      }
    }
  }

  const viaProxy = (url: string, init: RequestInit & { cookie?: string } = {}) =>
    fetch(`${nginx.base}${url}`, {
      redirect: "manual",
      ...init,
      headers: { ...(init.cookie ? { Cookie: init.cookie } : {}), ...(init.headers as Record<string, string>) },
    });
  /**
   * A GET to one instance. Retried once when the connection fails: the test's own kept-alive connection may be to
   * the process that was on this port before a restart.
   */
  const direct = (name: Name, url: string, cookie = ""): Promise<Response> => {
    const get = () => fetch(`${instances[name].base}${url}`, { redirect: "manual", headers: cookie ? { Cookie: cookie } : {} });
    return get().catch(get);
  };
  /** Whose runner holds a job now (its worker id carries the process id), or null. */
  const holder = async (jobId: number): Promise<Name | null> => {
    const job = await db().selectFrom("jobs").select(["locked_by", "status"]).where("id", "=", jobId).executeTakeFirstOrThrow();
    if (job.status !== "running" || !job.locked_by) return null;
    const pid = Number(job.locked_by.split(":")[1]);
    return (["a", "b"] as const).find((n) => instances[n].child.pid === pid) ?? null;
  };
  /** The instances with a request in flight now besides the scrape itself (read from each one's /metrics). */
  const busy = async (): Promise<Name[]> => {
    const running = async (name: Name) => {
      const text = await (
        await fetch(`${instances[name].base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } }).catch(() =>
          fetch(`${instances[name].base}/metrics`, { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } }),
        )
      ).text();
      return Number(/^koala_http_requests_in_flight (\d+)/m.exec(text)?.[1] ?? 0) - 1;
    };
    const counts = await Promise.all((["a", "b"] as const).map(running));
    return (["a", "b"] as const).filter((_, i) => counts[i]! > 0);
  };
  /** Waits until an instance is busy with the requests just sent, and names it. */
  const busyOne = async () => {
    let found: Name[] = [];
    await expect.poll(async () => (found = await busy()).length, { timeout: 10_000, interval: 20 }).toBeGreaterThan(0);
    return found[0]!;
  };
  const job = (jobId: number) => db().selectFrom("jobs").selectAll().where("id", "=", jobId).executeTakeFirstOrThrow();

  let cookie = "";

  it("signs in by a link asked for through the proxy, and the session works on both instances", async () => {
    const asked = await viaProxy("/login", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ intent: "magic-link", email: editor.user.email }),
    });
    expect(asked.status).toBe(200);
    // Sent once, by whichever instance's runner took the mail job.
    await expect.poll(() => mails.filter((m) => m.includes(editor.user.email)).length, { timeout: 20_000, interval: 100 }).toBe(1);
    const raw = mails
      .find((m) => m.includes(editor.user.email))!
      .replace(/=\r?\n/g, "")
      .replace(/=3D/g, "=");
    const link = /\/auth\/([\w-]{20,})/.exec(raw)!;
    const used = await viaProxy(link[0], {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: link[1]! }),
    });
    expect(used.status).toBe(302);
    cookie = used.headers
      .getSetCookie()
      .find((c) => c.startsWith("__Host-koala_session="))!
      .split(";")[0]!;
    expect(cookie).toBeTruthy();
    for (const name of ["a", "b"] as const) {
      const page = await direct(name, `/client/${projectId}`, cookie);
      expect(page.status, name).toBe(200);
      expect(await pageText(page)).toContain("Shelf 0");
    }
  });

  it("takes uploads with and without JavaScript through the proxy; both instances show them; images come from the bucket by a presigned redirect", async () => {
    const form = new FormData();
    form.append("files", new Blob([new Uint8Array(await jpeg(320, 240, "#226644"))], { type: "image/jpeg" }), "no-js.jpg");
    const noJs = await viaProxy(`/upload/${projectId}/files`, { method: "POST", body: form, cookie });
    expect(noJs.status).toBe(302);

    const json = (url: string, body: unknown) =>
      viaProxy(url, { method: "POST", cookie, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
    const signed = (await (await json("/api/uploads", { clientID: projectId, fileName: "with-js.jpg" })).json()) as {
      uploadUrl: string;
      key: string;
    };
    expect(signed.uploadUrl.startsWith(s3.endpoint)).toBe(true);
    expect((await fetch(signed.uploadUrl, { method: "PUT", body: new Uint8Array(await jpeg(320, 240, "#664422")) })).status).toBe(200);
    const registered = await json("/api/images", { clientID: projectId, newImage: { imgURL: signed.key, imgTitle: "With JS" } });
    expect(registered.status).toBe(201);
    const { insertID } = (await registered.json()) as { insertID: number };

    for (const name of ["a", "b"] as const) {
      const text = await pageText(await direct(name, `/client/${projectId}`, cookie));
      expect(text, name).toContain("With JS");
      expect(text, name).toContain("no-js");
    }
    const { thumb_key } = await db().selectFrom("images").select("thumb_key").where("id", "=", insertID).executeTakeFirstOrThrow();
    const media = await viaProxy(`/media/${insertID}/${thumb_key.replaceAll("/", "~")}`, { cookie });
    expect(media.status).toBe(302);
    expect(media.headers.get("cache-control")).toMatch(/^private, max-age=\d+$/);
    const location = media.headers.get("location")!;
    expect(location.startsWith(`${s3.endpoint}/${s3.bucket}/${thumb_key}?`)).toBe(true);
    const fromBucket = await fetch(location);
    expect(fromBucket.status).toBe(200);
    expect(fromBucket.headers.get("content-type")).toBe("image/webp");
    const thumb = await storage().get(thumb_key);
    expect(Buffer.from(await fromBucket.arrayBuffer()).length).toBe(thumb!.size);
    thumb!.stream.destroy();
    // A grid thumbnail not in the bucket (an image stored before there were any) is made there before the redirect.
    const gridKey = gridThumbKey(thumb_key);
    await storage().delete(gridKey);
    expect(await storage().size(gridKey)).toBeNull();
    const grid = await viaProxy(mediaUrl(insertID, gridKey), { cookie });
    expect(grid.status).toBe(302);
    const made = await fetch(grid.headers.get("location")!);
    expect(made.status).toBe(200);
    expect(await sharp(Buffer.from(await made.arrayBuffer())).metadata()).toMatchObject({ format: "webp", width: 240 });
    // The same URL for half its life: asked again, the redirect is the same, so the browser's copy stays good.
    // (Asked twice more if the first two straddled the moment the URL is signed anew, once every 300 s.)
    const again = async () => (await viaProxy(`/media/${insertID}/${thumb_key.replaceAll("/", "~")}`, { cookie })).headers.get("location");
    const [second, third] = [await again(), await again()];
    expect([location, third]).toContain(second);
    // A share link's image is redirected too, but the redirect is never kept: the link is checked on every view.
    const token = shareZip.split("/").at(-2)!;
    const sharedThumb = await db()
      .selectFrom("images")
      .select(["id", "thumb_key"])
      .where("title", "=", "Shelf 0")
      .executeTakeFirstOrThrow();
    const shared = await viaProxy(`/shared-media/${token}/${sharedThumb.id}/${sharedThumb.thumb_key.replaceAll("/", "~")}`);
    expect(shared.status).toBe(302);
    expect(shared.headers.get("cache-control")).toBe("no-store");
    expect((await fetch(shared.headers.get("location")!)).status).toBe(200);
    // The bucket's signature check holds: the URL with its signature altered is refused.
    const forged = new URL(location);
    const signature = forged.searchParams.get("X-Amz-Signature")!;
    forged.searchParams.set("X-Amz-Signature", `${signature[0] === "0" ? "1" : "0"}${signature.slice(1)}`);
    expect((await fetch(forged)).status).toBe(403);
    // And the pages allow images from the bucket.
    expect((await viaProxy(`/client/${projectId}`, { cookie })).headers.get("content-security-policy")).toContain(
      `img-src 'self' data: blob: ${s3.endpoint}`,
    );
  });

  it("answers /metrics with the token and refuses it without; the access log carries the request id nginx sent", async () => {
    expect((await viaProxy("/metrics")).status).toBe(401);
    const metrics = await viaProxy("/metrics", { headers: { Authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("koala_http_requests_total");
    const page = await viaProxy("/login");
    const id = page.headers.get("x-request-id")!;
    expect(id).toMatch(/^[0-9a-f]{32}$/); // nginx's $request_id
    await expect
      .poll(() => [...requests("a"), ...requests("b")].filter((r) => r.requestId === id).map((r) => r.path), { timeout: 5_000 })
      .toEqual(["/login"]);
  });

  it("queues each daily job once when two instances started at the same moment run their first housekeeping together", async () => {
    // Housekeeping runs a minute after start, on both instances within milliseconds of each other.
    const queued = (type: string) =>
      db().selectFrom("jobs").select(["id", "unique_key"]).where("type", "=", type).where("status", "=", "queued").execute();
    const ran = () => (["a", "b"] as const).every((n) => instances[n].output().includes('"msg":"housekeeping done"'));
    await expect.poll(ran, { timeout: 90_000, interval: 500 }).toBe(true);
    for (const type of [REVIEW_DIGEST_JOB, REGISTRATION_DIGEST_JOB]) expect(await queued(type), type).toHaveLength(1);
  }, 120_000);

  /** A multipart upload through nginx that sends its head now and the rest of its body when told. */
  async function slowUpload(title: string) {
    const file = await jpeg(400, 300, "#aa3355");
    const head = `--zz\r\nContent-Disposition: form-data; name="files"; filename="${title}.jpg"\r\nContent-Type: image/jpeg\r\n\r\n`;
    const tail = `\r\n--zz--\r\n`;
    const length = Buffer.byteLength(head) + file.length + Buffer.byteLength(tail);
    const { port } = new URL(nginx.base);
    const socket: Socket = connect(Number(port), "127.0.0.1");
    await new Promise((r) => socket.once("connect", r));
    let answer = "";
    const done = new Promise<string>((resolve) => {
      socket.on("data", (c: Buffer) => (answer += c.toString("latin1")));
      socket.on("close", () => resolve(answer));
    });
    socket.write(
      `POST /upload/${projectId}/files HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nCookie: ${cookie}\r\nConnection: close\r\n` +
        `Content-Type: multipart/form-data; boundary=zz\r\nContent-Length: ${length}\r\n\r\n${head}`,
    );
    socket.write(file.subarray(0, 1000));
    return {
      finish() {
        socket.write(file.subarray(1000));
        socket.write(tail);
        return done;
      },
    };
  }
  const imageCount = async () => (await db().selectFrom("images").select("id").where("project_id", "=", projectId).execute()).length;

  it("finishes uploads in flight when their instance is stopped (SIGTERM), sends what follows to the other, and takes it back after a restart", async () => {
    const before = await imageCount();
    const uploads = [await slowUpload("late-1"), await slowUpload("late-2")];
    const victim = await busyOne();
    const other: Name = victim === "a" ? "b" : "a";
    const exit = exited(victim);
    instances[victim].child.kill("SIGTERM");
    try {
      await expect.poll(() => instances[victim].output(), { timeout: 10_000, interval: 50 }).toContain('"msg":"shutting down"');
      // Meanwhile every request through the proxy is answered (by the other instance).
      for (let i = 0; i < 6; i++) expect((await viaProxy("/login")).status).toBe(200);
      const answers = await Promise.all(uploads.map((u) => u.finish()));
      for (const answer of answers) expect(answer).toMatch(/^HTTP\/1\.1 302/);
      expect(await exit).toBe(0);
      expect(await imageCount()).toBe(before + 2);
      const upload = (r: { method: string; path: string }) => r.method === "POST" && r.path === `/upload/${projectId}/files`;
      const finished = requests(victim).filter(upload);
      expect(finished.length).toBeGreaterThan(0);
      expect(finished.every((r) => r.status === 302)).toBe(true);
      // And the no-JS upload before. The other instance is running: its line may reach its output a moment after the answer.
      await expect.poll(() => finished.length + requests(other).filter(upload).length, { timeout: 5_000, interval: 50 }).toBe(2 + 1);
      expect(instances[victim].output()).not.toContain("request cut by shutdown");
    } finally {
      await start(victim);
    }
    // Back in the rotation (once nginx's fail_timeout of 5 s has passed): requests through the proxy reach it again.
    await expect
      .poll(
        async () => {
          await viaProxy("/login");
          return requests(victim).some((r) => r.path === "/login");
        },
        { timeout: 15_000, interval: 250 },
      )
      .toBe(true);
  }, 120_000);

  it("finishes ZIP downloads in flight when their instance is stopped (SIGTERM): each arrives whole", async () => {
    const zip = () =>
      viaProxy(shareZip, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded", Origin: nginx.base },
        body: "all=1",
      });
    const downloads = [zip(), zip()];
    const victim = await busyOne();
    const exit = exited(victim);
    instances[victim].child.kill("SIGTERM");
    try {
      for (const res of await Promise.all(downloads)) {
        expect(res.status).toBe(200);
        const body = Buffer.from(await res.arrayBuffer());
        expect(body.length).toBe(Number(res.headers.get("content-length")));
        // The end-of-central-directory record: the archive was written to its end, with every entry.
        expect(body.subarray(-22, -18).toString("hex")).toBe("504b0506");
        expect(body.readUInt16LE(body.length - 12)).toBe(7); // six images and images.csv
      }
      expect(await exit).toBe(0);
      expect(instances[victim].output()).not.toContain("request cut by shutdown");
    } finally {
      await start(victim);
    }
  }, 120_000);

  it("says 503 on /readyz of both instances while the database refuses connections, /healthz stays 200, and 200 once it is back", async () => {
    await database.close();
    try {
      for (const name of ["a", "b"] as const) {
        const down = await direct(name, "/readyz");
        expect(down.status, name).toBe(503);
        expect(((await down.json()) as { database: string }).database).not.toBe("ok");
        expect((await direct(name, "/healthz")).status).toBe(200);
      }
    } finally {
      await database.open();
    }
    for (const name of ["a", "b"] as const)
      await expect.poll(async () => (await direct(name, "/readyz")).status, { timeout: 15_000, interval: 200 }).toBe(200);
  }, 60_000);

  /**
   * Waits for `jobId` to be running on an instance with some of its work done, kills that instance (-9), and
   * returns how long the job then waited for the other instance to take it, with the killed one's name.
   */
  async function killMidway(jobId: number, midway: (j: Awaited<ReturnType<typeof job>>) => boolean) {
    const caught: { victim: Name | null } = { victim: null };
    await expect
      .poll(
        async () => {
          const j = await job(jobId);
          caught.victim = midway(j) ? await holder(jobId) : null;
          return caught.victim !== null || j.status === "done";
        },
        { timeout: 60_000, interval: 20 },
      )
      .toBe(true);
    if (!caught.victim) return null; // done before it could be caught mid-way
    const killed = caught.victim;
    instances[killed].child.kill("SIGKILL");
    const at = Date.now();
    const survivor: Name = killed === "a" ? "b" : "a";
    try {
      await expect
        .poll(() => holder(jobId).then(async (h) => h ?? ((await job(jobId)).status === "done" ? survivor : null)), {
          timeout: (LEASE_SECONDS + 30) * 1000,
          interval: 100,
        })
        .toBe(survivor);
      return { killed, waitedMs: Date.now() - at };
    } finally {
      await exited(killed);
      await start(killed);
    }
  }

  it("runs a bulk job again on the other instance after its instance is killed (-9), within the lease plus 5 s, each image changed once", async () => {
    const big = await projectScope(editor.actor, bigProjectId);
    let outcome: Awaited<ReturnType<typeof killMidway>> = null;
    let jobId = 0;
    let keyword = "";
    for (let attempt = 1; attempt <= 3 && !outcome; attempt++) {
      keyword = `restocked${attempt}`;
      const run = await runBulk(big, { all: true, ids: [] }, { op: "keywords", keywords: [keyword] });
      jobId = (run as { jobId: number }).jobId;
      outcome = await killMidway(jobId, (j) => j.status === "running" && (j.progress ?? 0) > 0 && (j.progress ?? 0) < (j.total ?? 0));
    }
    expect(outcome, "the job was caught running mid-way").not.toBeNull();
    expect(outcome!.waitedMs).toBeLessThanOrEqual((LEASE_SECONDS + 5) * 1000);
    await expect.poll(async () => (await job(jobId)).status, { timeout: 120_000, interval: 200 }).toBe("done");
    // Taken over once (a loaded machine may miss a renewal of the short test lease and count one more).
    expect((await job(jobId)).attempts).toBeGreaterThanOrEqual(2);
    // Each image has the keyword once, in exactly one new version.
    const versions = await sql<{ n: number | string; images: number | string }>`select count(*) as n, count(distinct v.image_id) as images
      from image_versions v join images i on i.id = v.image_id
      where i.project_id = ${bigProjectId} and v.keywords like ${`%"${keyword}"%`}`.execute(db());
    expect(versions.rows.map((r) => [Number(r.n), Number(r.images)])).toEqual([[MANY, MANY]]);
  }, 180_000);

  it("resumes a CSV import on the other instance from its checkpoint after its instance is killed (-9): every value, one audit entry, one e-mail", async () => {
    const big = await projectScope(editor.actor, bigProjectId);
    const ids = (await db().selectFrom("images").select("id").where("project_id", "=", bigProjectId).orderBy("id").execute()).map(
      (r) => r.id,
    );
    const dir = mkdtempSync(path.join(tmpdir(), "koala-import-"));
    let outcome: Awaited<ReturnType<typeof killMidway>> = null;
    let jobId = 0;
    let round = 0;
    for (round = 1; round <= 3 && !outcome; round++) {
      const file = path.join(dir, `regions-${round}.csv`);
      const row = (id: number) => [id, ...COLUMNS.map((c) => `R${round}-${c}-value-${id % 97}`)].join(",");
      writeFileSync(file, `Image ID,${COLUMNS.join(",")}\n${ids.map(row).join("\n")}\n`);
      jobId = ((await importUploadedCsv(big, file, `regions-${round}.csv`)) as { jobId: number }).jobId;
      // Past the check (the first half of the progress) and at least one batch written: a checkpoint exists.
      outcome = await killMidway(jobId, (j) => j.status === "running" && (j.progress ?? 0) > 500 && j.checkpoint !== null);
    }
    rmSync(dir, { recursive: true, force: true });
    expect(outcome, "the import was caught running mid-way").not.toBeNull();
    expect(outcome!.waitedMs).toBeLessThanOrEqual((LEASE_SECONDS + 5) * 1000);
    await expect.poll(async () => (await job(jobId)).status, { timeout: 120_000, interval: 200 }).toBe("done");
    // Taken over once (a loaded machine may miss a renewal of the short test lease and count one more).
    expect((await job(jobId)).attempts).toBeGreaterThanOrEqual(2);
    const last = round - 1;
    const values = await sql<{ n: number | string }>`select count(*) as n from image_attribute_values v join images i on i.id = v.image_id
      where i.project_id = ${bigProjectId} and v.value like ${`R${last}-%`}`.execute(db());
    expect(Number(values.rows[0]!.n)).toBe(MANY * COLUMNS.length);
    const audits = await db()
      .selectFrom("audit_log")
      .select("detail")
      .where("action", "=", "attributes.imported")
      .where("detail", "like", `%regions-${last}.csv%`)
      .execute();
    expect(audits).toHaveLength(1);
    await expect.poll(() => mails.filter((m) => m.includes(`regions-${last}.csv`)).length, { timeout: 20_000 }).toBe(1);
    await sleep(2_000);
    expect(mails.filter((m) => m.includes(`regions-${last}.csv`))).toHaveLength(1);
  }, 180_000);
});
