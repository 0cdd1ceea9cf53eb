import { readdirSync } from "node:fs";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { randomToken } from "~/lib/crypto.server";
import { recordExport } from "~/models/attribute-exports.server";
import { objectKey, storage } from "~/services/storage.server";
import { SYSTEM } from "~/models/actor";
import { ATTRIBUTE_MESSAGES } from "~/lib/attribute-rules";
import { parseManifest } from "~/lib/wsc-manifest";
import { createAttribute, setAttributeValues } from "~/models/attributes.server";
import { insertImage } from "~/models/images.server";
import { projectScope } from "~/models/scope.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser, meta, storedFakeFile } from "../helpers/fixtures";
import { pageText, sessionCookie, startServer, type RunningServer } from "../helpers/server";

/**
 * Manage Attributes, the panel's Assign / Remove and bulk Assign Attributes over real HTTP against the built server,
 * as forms post them without JavaScript: every spec message on the page that answers, the refused post changing
 * nothing, and the project's 404 for whoever may not do it.
 */
const SESSION_SECRET = "attributes-http-secret-0123456789abcdef";

const read = pageText;

describe.each(dialects)("attributes over HTTP (%s)", (dialect) => {
  let t: TestDatabase;
  let server: RunningServer;
  const cookies: Record<"manager" | "editor" | "viewer", string> = { manager: "", editor: "", viewer: "" };
  let projectId: number;
  let images: number[];
  let wscId: number;
  let regionId: number;
  let editorId: number;
  const post = (url: string, fields: Record<string, string | string[]>, who: keyof typeof cookies = "manager", extraCookie = "") => {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) body.append(k, one);
    return fetch(`${server.base}${url}`, {
      method: "POST",
      redirect: "manual",
      headers: {
        Cookie: [cookies[who], extraCookie].filter(Boolean).join("; "),
        "Content-Type": "application/x-www-form-urlencoded",
        Origin: server.base,
      },
      body,
    });
  };
  const get = (url: string, who: keyof typeof cookies = "manager") =>
    fetch(`${server.base}${url}`, { redirect: "manual", headers: { Cookie: cookies[who] } });
  const names = async () =>
    (
      await db().selectFrom("attributes").select(["name", "code", "active"]).where("project_id", "=", projectId).orderBy("id").execute()
    ).map((a) => `${a.name}/${a.code}/${a.active}`);
  const values = async () =>
    (
      await db()
        .selectFrom("image_attribute_values")
        .select(["image_id", "value"])
        .where("attribute_id", "=", regionId)
        .orderBy("image_id")
        .execute()
    ).map((r) => `${r.image_id}:${r.value}`);

  beforeAll(async () => {
    t = await freshDatabase(dialect, { SESSION_SECRET });
    const manager = await makeUser();
    const editor = await makeUser();
    editorId = editor.user.id;
    const viewer = await makeUser();
    const project = await makeProject([
      { actor: manager.actor, role: "manager" },
      { actor: editor.actor, role: "editor" },
      { actor: viewer.actor, role: "viewer" },
    ]);
    projectId = project.id;
    const scope = await projectScope(manager.actor, projectId);
    images = [];
    for (let i = 0; i < 3; i++) images.push(await insertImage(scope, await storedFakeFile(300 + i), meta(`Shelf ${i}`)));
    wscId = await createAttribute(scope, { name: "Source", code: "src", type: 1 });
    regionId = await createAttribute(scope, { name: "Region", code: "region", type: 3 });
    await setAttributeValues(scope, [{ imageId: images[0]!, attributeId: regionId, value: "North" }]);
    for (const [who, user] of [
      ["manager", manager],
      ["editor", editor],
      ["viewer", viewer],
    ] as const)
      cookies[who] = await sessionCookie(user.user.id);
    server = await startServer({ DATA_DIR: t.dataDir, DATABASE_URL: t.url, SESSION_SECRET });
  }, 90_000);
  afterAll(async () => {
    await server?.stop();
    await t.drop();
  });

  it("lists the attributes with their types for managers and editors (read-only for editors); viewers get a 403", async () => {
    const page = await read(await get(`/upload/${projectId}/attributes`));
    expect(page).toContain("Manage Attributes");
    expect(page).toContain("1 · WSC imported");
    expect(page).toContain("3 · user created");
    expect(page).toContain("Create Attribute");
    const editorPage = await read(await get(`/upload/${projectId}/attributes`, "editor"));
    expect(editorPage).toContain("Region");
    expect(editorPage).not.toContain("Create Attribute");
    expect((await get(`/upload/${projectId}/attributes`, "viewer")).status).toBe(403);
    expect((await post(`/upload/${projectId}/attributes`, { intent: "create", name: "Channel" }, "editor")).status).toBe(403);
    expect(await names()).toEqual(["Source/src/1", "Region/region/1"]);
  });

  it("answers each create rule with the spec's message (and the CSV's own column names with theirs) and creates nothing; spaces become underscores; a creation is audited", async () => {
    const cases: [string | null, string, number][] = [
      [null, ATTRIBUTE_MESSAGES.nameRequired, 400],
      ["   ", ATTRIBUTE_MESSAGES.nameBlank, 400],
      ["a".repeat(17), ATTRIBUTE_MESSAGES.nameLength, 400],
      ["Price$", ATTRIBUTE_MESSAGES.nameSpecial, 400],
      // The CSV's own columns: an attribute of the name would not survive export → import.
      ["Title", ATTRIBUTE_MESSAGES.nameReserved, 400],
      ["keywords", ATTRIBUTE_MESSAGES.nameReserved, 400],
      ["Image ID", ATTRIBUTE_MESSAGES.nameReserved, 400],
      ["region", ATTRIBUTE_MESSAGES.exists, 409],
    ];
    for (const [name, message, status] of cases) {
      const res = await post(`/upload/${projectId}/attributes`, name === null ? { intent: "create" } : { intent: "create", name });
      expect(res.status, String(name)).toBe(status);
      expect(await read(res), String(name)).toContain(message);
    }
    expect(await names()).toEqual(["Source/src/1", "Region/region/1"]);
    const made = await post(`/upload/${projectId}/attributes`, { intent: "create", name: "Store type" });
    expect(made.status).toBe(302);
    expect(await names()).toEqual(["Source/src/1", "Region/region/1", "Store_type/Store_type/1"]);
    // The audit log has it, with the person and the address the request came from (the load context's).
    const audit = await db()
      .selectFrom("audit_log")
      .select(["actor_user_id", "ip"])
      .where("action", "=", "attribute.created")
      .where("detail", "like", '%"name":"Store_type"%')
      .execute();
    expect(audit).toEqual([{ actor_user_id: expect.any(Number), ip: expect.stringMatching(/127\.0\.0\.1$/) }]);
  });

  it("refuses a save with a bad smart name or a 34th active attribute, keeps what was typed on the page, and saves nothing", async () => {
    const rows = async () =>
      db().selectFrom("attributes").select(["id", "name", "code"]).where("project_id", "=", projectId).orderBy("id").execute();
    const form = (edit: (r: { id: number; name: string; code: string }) => Record<string, string>) =>
      rows().then((list) => {
        const fields: Record<string, string | string[]> = { intent: "save", id: list.map((r) => String(r.id)) };
        for (const r of list)
          Object.assign(fields, { [`name-${r.id}`]: r.name, [`code-${r.id}`]: r.code, [`active-${r.id}`]: "on" }, edit(r));
        return fields;
      });
    const before = await names();
    const bad = await post(
      `/upload/${projectId}/attributes`,
      await form((r) => (r.name === "Region" ? { [`code-${r.id}`]: "two words" } : {})),
    );
    expect(bad.status).toBe(400);
    const badPage = await read(bad);
    expect(badPage).toContain(ATTRIBUTE_MESSAGES.smartName);
    expect(badPage).toContain('value="two words"');
    for (let i = 0; i < 31; i++)
      await createAttribute(await projectScope(SYSTEM, projectId), { name: `Extra${i}`, type: 3, active: false });
    const limit = await post(`/upload/${projectId}/attributes`, await form(() => ({})));
    expect(limit.status).toBe(400);
    expect(await read(limit)).toContain(`${ATTRIBUTE_MESSAGES.activeLimit}. ${ATTRIBUTE_MESSAGES.activeLimitHelp}`);
    expect((await names()).slice(0, before.length)).toEqual(before);
    const none = await post(
      `/upload/${projectId}/attributes`,
      await form((r) => (r.name.startsWith("Extra") ? { [`active-${r.id}`]: "" } : {})),
    );
    expect(none.status).toBe(302);
    await db().deleteFrom("attributes").where("name", "like", "Extra%").execute();
  });

  it("deletes a user attribute by the typed DELETE; a WSC attribute is refused and stays", async () => {
    const store = (await db().selectFrom("attributes").select("id").where("name", "=", "Store_type").executeTakeFirstOrThrow()).id;
    const wrong = await post(`/upload/${projectId}/attributes/${store}/delete`, { confirm: "delete" });
    expect(wrong.status).toBe(400);
    expect(await read(wrong)).toContain(ATTRIBUTE_MESSAGES.deleteConfirm);
    expect(await read(await get(`/upload/${projectId}/attributes/${wscId}/delete`))).toContain(ATTRIBUTE_MESSAGES.cannotDelete);
    const refused = await post(`/upload/${projectId}/attributes/${wscId}/delete`, { confirm: "DELETE" });
    expect(refused.status).toBe(400);
    expect(await read(refused)).toContain(ATTRIBUTE_MESSAGES.cannotDelete);
    expect((await post(`/upload/${projectId}/attributes/${store}/delete`, { confirm: "DELETE" }, "editor")).status).toBe(403);
    expect((await post(`/upload/${projectId}/attributes/${store}/delete`, { confirm: "DELETE" })).status).toBe(302);
    expect(await names()).toEqual(["Source/src/1", "Region/region/1"]);
  });

  it("assigns in the image panel with the spec's messages; an existing value needs Replace; viewers get 403", async () => {
    const url = `/image/${images[0]}/attributes`;
    const cases: [Record<string, string>, string][] = [
      [{ value: "South" }, ATTRIBUTE_MESSAGES.pickAttribute],
      [{ attribute: String(wscId), value: "South" }, ATTRIBUTE_MESSAGES.pickAttribute],
      [{ attribute: String(regionId) }, ATTRIBUTE_MESSAGES.valueRequired],
      [{ attribute: String(regionId), value: "   " }, ATTRIBUTE_MESSAGES.valueBlank],
      [{ attribute: String(regionId), value: "x".repeat(65) }, ATTRIBUTE_MESSAGES.valueLength],
      [{ attribute: String(regionId), value: "50%" }, ATTRIBUTE_MESSAGES.valueSpecial],
      [{ attribute: String(regionId), value: "South" }, ATTRIBUTE_MESSAGES.removeExisting],
    ];
    for (const [fields, message] of cases) {
      const res = await post(url, fields, "editor");
      expect([400, 409], message).toContain(res.status);
      expect(await read(res), message).toContain(message);
    }
    expect(await values()).toEqual([`${images[0]}:North`]);
    expect((await post(url, { attribute: String(regionId), value: "South", replace: "yes" }, "viewer")).status).toBe(403);
    const done = await post(url, { attribute: String(regionId), value: "South", replace: "yes" }, "editor");
    expect(done.status).toBe(302);
    expect(done.headers.get("Location")).toBe(`/image/${images[0]}`);
    expect(await values()).toEqual([`${images[0]}:South`]);
  });

  it("removes a value by the typed REMOVE and says so", async () => {
    const url = `/image/${images[0]}/attributes/${regionId}/remove`;
    const wrong = await post(url, { confirm: "remove" }, "editor");
    expect(wrong.status).toBe(400);
    expect(await read(wrong)).toContain(ATTRIBUTE_MESSAGES.removeConfirm);
    expect((await post(`/image/${images[0]}/attributes/${wscId}/remove`, { confirm: "REMOVE" }, "editor")).status).toBe(404);
    expect((await post(url, { confirm: "REMOVE" }, "editor")).status).toBe(302);
    expect(await values()).toEqual([]);
    expect((await get(url, "editor")).status).toBe(404);
  });

  it("bulk assigns to the whole selection from the project's bulk menu", async () => {
    await setAttributeValues(await projectScope(SYSTEM, projectId), [{ imageId: images[1]!, attributeId: regionId, value: "Kept" }]);
    const selected = await post(`/client/${projectId}`, { intent: "select-all" }, "editor");
    expect(selected.status).toBe(302);
    const selection = selected.headers
      .getSetCookie()
      .find((c) => c.startsWith("koala_selection"))!
      .split(";")[0]!;
    const page = await read(
      await fetch(`${server.base}/client/${projectId}/bulk/attributes`, { headers: { Cookie: `${cookies.editor}; ${selection}` } }),
    );
    expect(page).toContain("Assign Attributes");
    expect(page).toContain("Assign to 3 images");
    const bad = await post(`/client/${projectId}/bulk/attributes`, { attribute: String(regionId), value: "a|b" }, "editor", selection);
    expect(bad.status).toBe(400);
    expect(await read(bad)).toContain(ATTRIBUTE_MESSAGES.valueSpecial);
    const done = await post(`/client/${projectId}/bulk/attributes`, { attribute: String(regionId), value: "East" }, "editor", selection);
    expect(done.status).toBe(302);
    expect(await values()).toEqual([`${images[0]}:East`, `${images[1]}:Kept`, `${images[2]}:East`]);
  });

  /** The Import Attributes CSV form's post, as a browser sends it (multipart, the file in the field `file`). */
  const upload = (name: string, text: string, who: keyof typeof cookies = "editor") => {
    const form = new FormData();
    form.append("file", new Blob([text], { type: "text/csv" }), name);
    return fetch(`${server.base}/upload/${projectId}/import`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookies[who], Origin: server.base },
      body: form,
    });
  };
  const tmpFiles = () => readdirSync(path.join(t.dataDir, "tmp")).filter((f) => f.startsWith("import-"));

  it("holds one value rule on every path: 64 characters are taken and 65 refused with the same message in the panel, bulk assign, the CSV import and a WSC manifest", async () => {
    // Decision 0014: 1 to 64 characters everywhere (the spec's board-level reading), stated under every value field.
    const v64 = "North America – online and in-store convenience, forecourt shops";
    const v65 = `${v64}s`;
    expect([v64.length, v65.length]).toEqual([64, 65]);
    const tooLong = "Value cannot be longer than 64 characters";
    expect(await read(await get(`/image/${images[0]}/attributes`, "editor"))).toContain("1 to 64 characters");
    const before = await values();

    const panel = `/image/${images[0]}/attributes`;
    const refusedPanel = await post(panel, { attribute: String(regionId), value: v65, replace: "yes" }, "editor");
    expect(refusedPanel.status).toBe(400);
    expect(await read(refusedPanel)).toContain(tooLong);

    const selection = (await post(`/client/${projectId}`, { intent: "select-all" }, "editor")).headers
      .getSetCookie()
      .find((c) => c.startsWith("koala_selection"))!
      .split(";")[0]!;
    const bulkUrl = `/client/${projectId}/bulk/attributes`;
    expect(await read(await fetch(`${server.base}${bulkUrl}`, { headers: { Cookie: `${cookies.editor}; ${selection}` } }))).toContain(
      "1 to 64 characters",
    );
    const refusedBulk = await post(bulkUrl, { attribute: String(regionId), value: v65, replace: "yes" }, "editor", selection);
    expect(refusedBulk.status).toBe(400);
    expect(await read(refusedBulk)).toContain(tooLong);

    const refusedCsv = await upload("long.csv", `Image ID,Region\n${images[0]},"${v65}"\n`);
    expect(refusedCsv.status).toBe(400);
    expect(await read(refusedCsv)).toContain(`Region: ${tooLong}`);

    const manifest = (value: string) =>
      parseManifest(Buffer.from(JSON.stringify([{ url: "https://example.com/a.jpg", attributes: { Region: value } }])), "application/json");
    expect(manifest(v65).problems).toEqual([{ line: 1, message: `Attribute "Region": ${tooLong}` }]);
    expect(manifest(v64).entries[0]!.attributes).toEqual({ Region: v64 });
    expect(await values()).toEqual(before);

    expect((await post(panel, { attribute: String(regionId), value: v64, replace: "yes" }, "editor")).status).toBe(302);
    expect((await values()).filter((v) => v.startsWith(`${images[0]}:`))).toEqual([`${images[0]}:${v64}`]);
    expect((await post(bulkUrl, { attribute: String(regionId), value: v64, replace: "yes" }, "editor", selection)).status).toBe(302);
    expect(await values()).toEqual(images.map((id) => `${id}:${v64}`));
    expect((await upload("long.csv", `Image ID,Region\n${images[1]},"${v64.toUpperCase()}"\n`)).status).toBe(302);
    expect((await values()).filter((v) => v.startsWith(`${images[1]}:`))).toEqual([`${images[1]}:${v64.toUpperCase()}`]);
  });

  it("imports a good CSV at once, and answers a bad one with its report and the spec's statuses, changing nothing", async () => {
    const good = await upload("regions.csv", `Image ID,Region\n${images[2]},Coast\n`);
    expect(good.status).toBe(302);
    expect(good.headers.get("Location")).toBe(`/upload/${projectId}/import`);
    expect((await values()).filter((v) => v.startsWith(`${images[2]}:`))).toEqual([`${images[2]}:Coast`]);
    const before = await values();
    const bad = await upload("bad.csv", `Image ID,Region,Colour\n${images[0]},North,x\n`);
    expect(bad.status).toBe(400);
    const page = await read(bad);
    expect(page).toContain("CSV Import Error");
    expect(page).toContain('Line 1: Unknown column "Colour": not an attribute of this project');
    const noId = await upload("no-id.csv", `Image ID,Region\nPhoto,North\n`);
    expect(noId.status).toBe(406);
    expect(await read(noId)).toContain("Image ID is not present in first column for all images");
    const broken = await upload("broken.csv", `Image ID,Region\n${images[0]},"North\n`);
    expect(broken.status).toBe(400);
    expect(await read(broken)).toContain("CSV Data could not be parsed");
    expect(await values()).toEqual(before);
    expect((await upload("regions.csv", `Image ID,Region\n${images[2]},Coast\n`, "viewer")).status).toBe(403);
    expect(tmpFiles()).toEqual([]);
  });

  it("refuses another file type and a file over 100 MB before storing it, and keeps nothing of it", async () => {
    const wrong = await upload("regions.xlsx", "PK…");
    expect(wrong.status).toBe(415);
    expect(await read(wrong)).toContain("Unsupported file format");
    // Declared over 100 MB: refused on the header, before the body is read (only its first bytes are ever sent).
    const declared = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(`${server.base}/upload/${projectId}/import`, {
        method: "POST",
        headers: {
          Cookie: cookies.editor,
          Origin: server.base,
          "Content-Type": "multipart/form-data; boundary=zz",
          "Content-Length": String(101 * 1024 * 1024),
        },
      });
      req.on("response", (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => {
          resolve({ status: res.statusCode ?? 0, text });
          req.destroy();
        });
      });
      req.on("error", reject);
      req.write(`--zz\r\nContent-Disposition: form-data; name="file"; filename="huge.csv"\r\n\r\nAAAA`);
    });
    expect(declared.status).toBe(413);
    expect(declared.text.replace(/<!-- -->/g, "")).toContain("Please upload a file that is less than 100MB");
    // Sent without a length (chunked), past 100 MB: stopped as it passes the limit.
    const head = `--zz\r\nContent-Disposition: form-data; name="file"; filename="huge.csv"\r\nContent-Type: text/csv\r\n\r\n`;
    const chunk = new Uint8Array(1024 * 1024).fill(0x41);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(new TextEncoder().encode(head));
        if (sent >= 102) {
          controller.enqueue(new TextEncoder().encode("\r\n--zz--\r\n"));
          controller.close();
          return;
        }
        sent += 1;
        controller.enqueue(chunk);
      },
    });
    const huge = await fetch(`${server.base}/upload/${projectId}/import`, {
      method: "POST",
      redirect: "manual",
      headers: { Cookie: cookies.editor, Origin: server.base, "Content-Type": "multipart/form-data; boundary=zz" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(huge.status).toBe(413);
    expect(await read(huge)).toContain("File too large");
    expect(tmpFiles()).toEqual([]);
    expect((await fetch(`${server.base}/healthz`)).status).toBe(200);
  }, 60_000);

  it("serves an export's link to its owner only, while a member; signed out it asks to sign in first", async () => {
    const token = randomToken(32);
    const key = objectKey("exports", randomBytes(32).toString("hex"), "csv");
    await storage().put(key, Buffer.from("\uFEFFImage ID,Title\n1,x\n"));
    await recordExport({
      token,
      userId: editorId,
      projectId,
      storageKey: key,
      fileName: "x.csv",
      sizeBytes: 22,
      expiresAt: Date.now() + 60_000,
    });
    const mine = await get(`/exports/${token}`, "editor");
    expect(mine.status).toBe(200);
    expect(mine.headers.get("Content-Disposition")).toContain('filename="x.csv"');
    expect(await mine.text()).toContain("Image ID,Title");
    expect((await get(`/exports/${token}`, "manager")).status).toBe(404);
    const signedOut = await fetch(`${server.base}/exports/${token}`, { redirect: "manual" });
    expect(signedOut.status).toBe(302);
    expect(signedOut.headers.get("Location")).toMatch(/^\/login\?redirectTo=%2Fexports%2F/);
    await db().deleteFrom("project_members").where("user_id", "=", editorId).where("project_id", "=", projectId).execute();
    try {
      expect((await get(`/exports/${token}`, "editor")).status).toBe(404);
    } finally {
      await db()
        .insertInto("project_members")
        .values({ project_id: projectId, user_id: editorId, role: "editor", created_at: Date.now() })
        .execute();
    }
  });
});
