import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { config, loadConfig, setConfig } from "~/config.server";
import { db } from "~/db/connection.server";
import { FetchRefused, safeFetch } from "~/lib/safe-fetch.server";
import { projectScope } from "~/models/scope.server";
import { findUserByEmail } from "~/models/users.server";
import { jobRegistry } from "~/services/job-registry.server";
import { runOnce } from "~/services/jobs.server";
import { startReimport, type ReimportReport } from "~/services/reimport.server";
import { DEMO_EMAIL, seedDemo } from "~/services/demo.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { freePort, startServer, type RunningServer } from "../helpers/server";

/**
 * The demo's WSC project re-imports on a machine without a network: its source is the app itself (a manifest and
 * images under /demo-wsc/), allowed as that one origin only while the demo is on. The real server (`npm run build`
 * first) serves the source; the re-import job runs here, as the worker would.
 */
describe.each(dialects)("the demo's WSC source (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  let port: number;
  const env = (extra: Record<string, string> = {}) => ({
    DATA_DIR: t.dataDir,
    DATABASE_URL: t.url,
    JOB_RUNNER: "false",
    DEMO_SEED: "auto",
    ...extra,
  });

  beforeAll(async () => {
    port = await freePort();
    t = await freshDatabase(dialect, { PORT: String(port), DEMO_SEED: "auto" });
    await seedDemo({ imagesPerProject: 2 });
    // The seed is present, so the server seeds nothing: it only serves.
    server = await startServer(env(), port);
  }, 180_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  const globex = async () => {
    const user = await findUserByEmail(DEMO_EMAIL);
    const row = await db().selectFrom("projects").select("id").where("name", "=", "Globex Packaging").executeTakeFirstOrThrow();
    return projectScope({ id: user!.id, role: user!.role }, row.id);
  };
  const reimport = async () => {
    const job = await startReimport(await globex());
    while (await runOnce(jobRegistry, "demo-wsc-test"));
    const row = await db().selectFrom("jobs").select(["status", "result", "last_error"]).where("id", "=", job).executeTakeFirstOrThrow();
    expect(row.status, row.last_error ?? "").toBe("done");
    return (JSON.parse(row.result!) as { reimport: ReimportReport }).reimport;
  };

  it("re-imports Globex Packaging from the app itself: six images and a WSC attribute of the source's, then found again by checksum", async () => {
    const scope = await globex();
    expect(scope.project).toMatchObject({ wsc: true, wscSource: `http://127.0.0.1:${port}/demo-wsc/globex.json` });
    const first = await reimport();
    expect(first).toMatchObject({ kind: "wsc", added: 6, updated: 0, unchanged: 0, refused: 0, problems: [] });
    expect(first.failure).toBeUndefined();
    const images = await db().selectFrom("images").select("id").where("project_id", "=", scope.project.id).execute();
    expect(images).toHaveLength(2 + 6);
    const retailer = await db()
      .selectFrom("attributes")
      .select("type")
      .where("project_id", "=", scope.project.id)
      .where("name", "=", "Retailer")
      .executeTakeFirstOrThrow();
    expect(retailer.type).toBe(1);
    const again = await reimport();
    expect(again).toMatchObject({ added: 0, updated: 0, unchanged: 6, refused: 0 });
  }, 120_000);

  it("allows only that origin, and only while the demo is on; the route serves nothing else", async () => {
    const { wscAllowedPrivateHosts } = config();
    expect(wscAllowedPrivateHosts).toEqual([`127.0.0.1:${port}`]);
    const fetchWith = (url: string, allowed: readonly string[]) => safeFetch(url, { allowedPrivateHosts: allowed, maxBytes: 1_000_000 });
    const source = `http://127.0.0.1:${port}/demo-wsc/globex.json`;
    expect(JSON.parse((await fetchWith(source, wscAllowedPrivateHosts)).body.toString())).toHaveProperty("images.length", 6);
    // Another port of the same address stays refused, as does the address by another name.
    const other = await freePort();
    await expect(fetchWith(`http://127.0.0.1:${other}/`, wscAllowedPrivateHosts)).rejects.toThrow(
      new FetchRefused("Refused: 127.0.0.1 is a private address"),
    );
    await expect(fetchWith(`http://localhost:${port}/demo-wsc/globex.json`, wscAllowedPrivateHosts)).rejects.toThrow(
      /is a private address/,
    );
    // With the demo off, nothing is allowed.
    expect(loadConfig({ ...env(), PORT: String(port), DEMO_SEED: "off" }).wscAllowedPrivateHosts).toEqual([]);
    for (const path of ["/demo-wsc/9001.jpg", "/demo-wsc/1.jpg", "/demo-wsc/%2e%2e%2fkoala.sqlite", "/demo-wsc/other.json"]) {
      const res = await fetch(`${server.base}${path}`);
      expect(res.status, path).toBe(path === "/demo-wsc/9001.jpg" ? 200 : 404);
      if (res.ok) expect(res.headers.get("content-type")).toBe("image/jpeg");
    }
  });

  it("serves no source when the demo is off (the same re-import is refused)", async () => {
    const off = await startServer(env({ DEMO_SEED: "off" }));
    try {
      expect((await fetch(`${off.base}/demo-wsc/globex.json`)).status).toBe(404);
    } finally {
      await off.stop();
    }
    const saved = config();
    setConfig(loadConfig({ DATA_DIR: t.dataDir, KOALA_ENV: "development", LOG_LEVEL: "error", PORT: String(port), DEMO_SEED: "off" }));
    try {
      expect((await reimport()).failure).toBe("The WSC source could not be read. Refused: 127.0.0.1 is a private address");
    } finally {
      setConfig(saved);
    }
  }, 120_000);
});
