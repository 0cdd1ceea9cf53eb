import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { connect, useConnection, type Connection } from "~/db/connection.server";
import { gridPage, gridTotal } from "~/models/grid.server";
import { getImage } from "~/models/images.server";
import { listProjects } from "~/models/projects.server";
import { findUserByEmail } from "~/models/users.server";
import { jpeg, png } from "../helpers/images";

/** The real command line, run as a separate process on a fresh SQLite data directory. */
describe("koala command line", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "koala-cli-"));
  const env = { ...process.env, DATA_DIR: path.join(dir, "data"), KOALA_ENV: "development", LOG_LEVEL: "warn" };
  const koala = (...args: string[]) =>
    execFileSync(path.resolve("node_modules/.bin/tsx"), ["cli/koala.ts", ...args], { env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  let conn: Connection;

  beforeAll(async () => {
    const photos = path.join(dir, "photos");
    execFileSync("mkdir", ["-p", photos]);
    writeFileSync(path.join(photos, "a.jpg"), await jpeg(300, 200));
    writeFileSync(path.join(photos, "b.png"), await png(120, 90));
    writeFileSync(path.join(photos, "evil.jpg"), "<html><script>alert(1)</script></html>");
    writeFileSync(path.join(photos, "meta.csv"), 'file,title,description,keywords,ocr\na.jpg,Shelf A,"Front, left","retail, promo",SALE\n');
  });
  afterAll(async () => {
    await conn?.close();
    useConnection(undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it("prints its help", () => {
    expect(koala("--help")).toContain("Usage: npm run koala -- <command>");
  });

  it("creates a user with TOTP, a project, a membership, and imports a folder with a sidecar", () => {
    const created = koala("create-user", "--email", "Ana@Example.com", "--name", "Ana", "--surname", "Silva", "--password", "pw-123456", "--totp");
    expect(created).toMatch(/Created user ana@example.com/);
    expect(created).toMatch(/otpauth:\/\/totp\/Koala%3Aana%40example.com\?secret=[A-Z2-7]+/);
    expect(koala("create-project", "--name", "Acme")).toMatch(/Created project "Acme"/);
    expect(koala("add-member", "--project", "Acme", "--email", "ana@example.com", "--role", "manager")).toContain("manager");
    const imported = koala("import", "--project", "Acme", "--dir", path.join(dir, "photos"), "--sidecar", path.join(dir, "photos", "meta.csv"), "--as", "ana@example.com");
    expect(imported).toContain("skipped evil.jpg: The file is not a supported image");
    expect(imported).toContain('Imported 2 image(s) into "Acme", skipped 1.');
    expect(koala("totp-code", "--email", "ana@example.com")).toMatch(/^\d{6}\n$/);
    // Without --as the import acts as the system (recorded as no user).
    expect(koala("import", "--project", "Acme", "--dir", path.join(dir, "photos"))).toContain('Imported 2 image(s) into "Acme", skipped 1.');
    expect(koala("seed-large", "--count", "2500", "--name", "Big")).toContain('Large project "Big"');
  });

  it("left the database the way the models read it", async () => {
    setConfig(loadConfig({ DATA_DIR: env.DATA_DIR, KOALA_ENV: "development" }));
    conn = connect({ dialect: "sqlite", file: path.join(env.DATA_DIR, "koala.sqlite") });
    useConnection(conn);
    const ana = await findUserByEmail("ana@example.com");
    expect(ana).toMatchObject({ status: "active", role: "user" });
    const actor = { id: ana!.id, role: ana!.role };
    const [project] = await listProjects(actor);
    const page = await gridPage(actor, { kind: "project", projectId: project!.id });
    const images = await Promise.all(page.cards.map((c) => getImage(actor, c.id)));
    expect(images.map((i) => i.title).sort()).toEqual(["Shelf A", "a", "b", "b"]);
    expect(images.filter((i) => i.created_by === null)).toHaveLength(2);
    const big = (await listProjects({ id: 0, role: "admin" })).find((p) => p.name === "Big")!;
    expect(await gridTotal({ id: 0, role: "admin" }, { kind: "project", projectId: big.id })).toBe(2500);
    expect(images.find((i) => i.title === "Shelf A")).toMatchObject({ description: "Front, left", keywords: ["retail", "promo"], ocr_text: "SALE" });
  });

  it("fails with a clear message on bad input", () => {
    expect(() => koala("add-member", "--project", "Nope", "--email", "ana@example.com")).toThrow(/No project named "Nope"/);
  });
});
