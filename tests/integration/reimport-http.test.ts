import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { REIMPORT_MESSAGES, WSC_MESSAGES } from "~/lib/schemas";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";
import { pageText, sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * Re-import and the project's WSC source over real HTTP, as forms post them without JavaScript: the typed name's
 * messages, the job it starts, one at a time, and the project's 404 for whoever is not a manager.
 */
const SESSION_SECRET = "reimport-http-secret-0123456789abcdef";
const read = pageText;

describe.each(dialects)("re-import over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  const cookies: Record<"manager" | "editor" | "viewer", string> = { manager: "", editor: "", viewer: "" };
  let projectId: number;
  let projectName: string;
  let foreign: { id: number; name: string };
  const post = (url: string, fields: Record<string, string>, who: keyof typeof cookies = "manager") =>
    fetch(`${server.base}${url}`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookies[who], "Content-Type": "application/x-www-form-urlencoded", Origin: server.base },
      body: new URLSearchParams(fields),
    });
  const get = (url: string, who: keyof typeof cookies = "manager") =>
    fetch(`${server.base}${url}`, { redirect: "manual", headers: { Cookie: cookies[who] } });
  const jobs = async () => (await db().selectFrom("jobs").select("id").where("type", "=", "project.reimport").execute()).length;
  const project = () =>
    db().selectFrom("projects").select(["name", "wsc", "wsc_source"]).where("id", "=", projectId).executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const users = { manager: await makeUser(), editor: await makeUser(), viewer: await makeUser() };
    const p = await makeProject([
      { actor: users.manager.actor, role: "manager" },
      { actor: users.editor.actor, role: "editor" },
      { actor: users.viewer.actor, role: "viewer" },
    ]);
    projectId = p.id;
    projectName = p.name;
    foreign = await makeProject([]);
    for (const who of ["manager", "editor", "viewer"] as const) cookies[who] = await sessionCookie(users[who].user.id);
    // No job runner in the server: the queued job stays queued, so "one at a time" is seen over HTTP.
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET, JOB_RUNNER: "off" });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("shows the Re-import tile and page to managers only; editors and viewers get a 403, other projects and unknown ids a 404, and nothing starts", async () => {
    expect(await read(await get(`/upload/${projectId}`))).toContain(`href="/upload/${projectId}/reimport"`);
    expect(await read(await get(`/upload/${projectId}`, "editor"))).not.toContain("/reimport");
    const page = await read(await get(`/upload/${projectId}/reimport`));
    expect(page).toContain(`Re-import ${projectName}`);
    expect(page).toContain("Type the client name to confirm");
    for (const who of ["editor", "viewer"] as const) {
      expect((await get(`/upload/${projectId}/reimport`, who)).status).toBe(403);
      expect((await post(`/upload/${projectId}/reimport`, { confirm: projectName }, who)).status).toBe(403);
    }
    // A project the manager is not a member of, one that does not exist, and an id that is not one.
    for (const id of [foreign.id, 987654, "1e3"]) {
      const res = await post(`/upload/${id}/reimport`, { confirm: foreign.name });
      expect(res.status, String(id)).toBe(404);
    }
    expect(await jobs()).toBe(0);
  });

  it("asks for the client name typed exactly, with the spec's messages, then starts one job and refuses a second while it waits", async () => {
    const empty = await post(`/upload/${projectId}/reimport`, { confirm: "  " });
    expect(empty.status).toBe(400);
    expect(await read(empty)).toContain(REIMPORT_MESSAGES.empty);
    const wrong = await post(`/upload/${projectId}/reimport`, { confirm: projectName.toUpperCase() });
    expect(wrong.status).toBe(400);
    expect(await read(wrong)).toContain(REIMPORT_MESSAGES.mismatch);
    expect(await jobs()).toBe(0);
    const ok = await post(`/upload/${projectId}/reimport`, { confirm: projectName });
    expect(ok.status).toBe(302);
    expect(ok.headers.get("Location")).toMatch(/^\/jobs\/\d+$/);
    // The toast rides on the redirect's cookie; the job's page says what runs.
    expect(ok.headers.get("Set-Cookie")).toBeTruthy();
    const jobPage = await read(await get(ok.headers.get("Location")!));
    expect(jobPage).toContain("Re-importing the project");
    const again = await post(`/upload/${projectId}/reimport`, { confirm: projectName });
    expect(again.status).toBe(409);
    expect(await read(again)).toContain("A re-import of this project is already running.");
    expect(await jobs()).toBe(1);
  });

  it("keeps the WSC flag and source from the project edit dialog, refusing a source that is not an http(s) address", async () => {
    const bad = await post(`/client/${projectId}/edit`, { name: projectName, wsc: "yes", source: "file:///etc/passwd" });
    expect(bad.status).toBe(400);
    expect(await read(bad)).toContain(WSC_MESSAGES.sourceInvalid);
    const missing = await post(`/client/${projectId}/edit`, { name: projectName, wsc: "yes", source: "" });
    expect(await read(missing)).toContain(WSC_MESSAGES.sourceRequired);
    expect(await project()).toMatchObject({ wsc: 0, wsc_source: null });
    const ok = await post(`/client/${projectId}/edit`, { name: projectName, wsc: "yes", source: "https://wsc.example/list.json" });
    expect(ok.status).toBe(302);
    expect(await project()).toMatchObject({ wsc: 1, wsc_source: "https://wsc.example/list.json" });
    const page = await read(await get(`/upload/${projectId}/reimport`));
    expect(page).toContain("This is a WSC project: its source");
    expect(page).toContain("https://wsc.example/list.json");
    expect(
      (await post(`/client/${projectId}/edit`, { name: projectName, wsc: "yes", source: "https://x.example/" }, "editor")).status,
    ).toBe(403);
  });
});
