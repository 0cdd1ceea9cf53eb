import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { verifyPassword } from "~/lib/crypto.server";
import { POSITIONS_JOB } from "~/lib/job-types";
import { totpCode } from "~/lib/totp.server";
import { gridTotal } from "~/models/grid.server";
import { addMember, createProject, findProjectByName } from "~/models/projects.server";
import { projectScope } from "~/models/scope.server";
import { createUser, findUserByEmail } from "~/models/users.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { jpeg, png } from "../helpers/images";

/**
 * The real command line, run as a separate process (tsx) on a fresh SQLite database; what each command did is
 * read back through the models. Each test starts the CLI once: a start costs seconds on a loaded machine, so
 * the time limits are generous. The people and projects a command needs are made in-process beforehand, so
 * no test depends on another. SQLite only: the commands call the same models the dialect tests cover.
 */
const CLI_MS = 60_000;
const TOTP_SECRET = "JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP";
const ADMIN = { id: 0, role: "admin" as const };
const run = promisify(execFile);

describe("koala command line", () => {
  let t: TestDatabase;
  let photos: string;
  let koala: (...args: string[]) => Promise<string>;

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    const env = { ...process.env, DATA_DIR: t.dataDir, DATABASE_URL: t.url, KOALA_ENV: "development", LOG_LEVEL: "warn" };
    koala = async (...args) =>
      (await run(path.resolve("node_modules/.bin/tsx"), ["cli/koala.ts", ...args], { env, encoding: "utf8" })).stdout;
    photos = path.join(t.dataDir, "photos");
    mkdirSync(photos);
    writeFileSync(path.join(photos, "a.jpg"), await jpeg(300, 200));
    writeFileSync(path.join(photos, "b.png"), await png(120, 90));
    writeFileSync(path.join(photos, "evil.jpg"), "<html><script>alert(1)</script></html>");
    writeFileSync(path.join(photos, "meta.csv"), 'file,title,description,keywords,ocr\na.jpg,Shelf A,"Front, left","retail, promo",SALE\n');
    const ana = await createUser({ email: "ana@example.com", name: "Ana", surname: "Silva", status: "active", totp_secret: TOTP_SECRET });
    await createUser({ email: "cy@example.com", name: "Cy", surname: "Ng", status: "active" });
    await addMember((await createProject({ name: "Acme" })).id, ana.id, "manager");
    await createProject({ name: "Acme System" });
  });
  afterAll(() => t.drop());

  const imagesOf = async (project: string) =>
    db()
      .selectFrom("images")
      .select(["title", "description", "keywords", "ocr_text", "created_by"])
      .where("project_id", "=", (await findProjectByName(project))!.id)
      .orderBy("title")
      .execute();

  it("prints its help, naming every command with its options (enrol-totp, totp-code --email)", { timeout: CLI_MS }, async () => {
    const help = await koala("--help");
    expect(help).toContain("Usage: npm run koala -- <command>");
    expect(help).toContain("enrol-totp --email E");
    expect(help).toContain("totp-code --email E");
  });

  it("creates an active user with a password and TOTP, and prints the otpauth URI", { timeout: CLI_MS }, async () => {
    const out = await koala(
      "create-user",
      "--email",
      "Bo@Example.com",
      "--name",
      "Bo",
      "--surname",
      "Li",
      "--password",
      "pw-123456",
      "--totp",
    );
    expect(out).toMatch(/Created user bo@example.com/);
    const secret = /otpauth:\/\/totp\/Koala%3Abo%40example.com\?secret=([A-Z2-7]+)/.exec(out)?.[1];
    expect(secret).toBeDefined();
    const bo = await findUserByEmail("bo@example.com");
    expect(bo).toMatchObject({ name: "Bo", surname: "Li", status: "active", role: "user", totp_secret: secret });
    expect(await verifyPassword("pw-123456", bo!.password_hash)).toBe(true);
  });

  it("creates a project", { timeout: CLI_MS }, async () => {
    expect(await koala("create-project", "--name", "Made by the CLI")).toMatch(/Created project "Made by the CLI"/);
    expect(await findProjectByName("Made by the CLI")).toBeDefined();
  });

  it("adds a member to a project with the given role", { timeout: CLI_MS }, async () => {
    expect(await koala("add-member", "--project", "Acme", "--email", "cy@example.com", "--role", "viewer")).toContain("viewer");
    const member = await db()
      .selectFrom("project_members")
      .select("role")
      .where("project_id", "=", (await findProjectByName("Acme"))!.id)
      .where("user_id", "=", (await findUserByEmail("cy@example.com"))!.id)
      .executeTakeFirst();
    expect(member).toEqual({ role: "viewer" });
  });

  it("imports a folder with a CSV sidecar as a user, skipping a file that is not an image", { timeout: CLI_MS }, async () => {
    const out = await koala(
      "import",
      "--project",
      "Acme",
      "--dir",
      photos,
      "--sidecar",
      path.join(photos, "meta.csv"),
      "--as",
      "ana@example.com",
    );
    expect(out).toContain("skipped evil.jpg: The file is not a supported image");
    expect(out).toContain('Imported 2 image(s) into "Acme", skipped 1.');
    const ana = (await findUserByEmail("ana@example.com"))!;
    const images = await imagesOf("Acme");
    expect(images).toEqual([
      { title: "Shelf A", description: "Front, left", keywords: JSON.stringify(["retail", "promo"]), ocr_text: "SALE", created_by: ana.id },
      { title: "b", description: "", keywords: "[]", ocr_text: "", created_by: ana.id },
    ]);
  });

  it("imports without --as as the system, recorded as no user", { timeout: CLI_MS }, async () => {
    expect(await koala("import", "--project", "Acme System", "--dir", photos)).toContain(
      'Imported 2 image(s) into "Acme System", skipped 1.',
    );
    const images = await imagesOf("Acme System");
    expect(images.map((i) => [i.title, i.created_by])).toEqual([
      ["a", null],
      ["b", null],
    ]);
  });

  it("prints a user's current TOTP code", { timeout: CLI_MS }, async () => {
    const before = Date.now();
    const out = await koala("totp-code", "--email", "ana@example.com");
    // The 30-second step may turn while the CLI starts: any step from start to finish is the current code.
    const steps = new Set([totpCode(TOTP_SECRET, before), totpCode(TOTP_SECRET, Date.now())]);
    expect(out).toMatch(/^\d{6}\n$/);
    expect(steps).toContain(out.trim());
  });

  it("seeds a large metadata-only project", { timeout: 2 * CLI_MS }, async () => {
    expect(await koala("seed-large", "--count", "2500", "--name", "Big")).toContain('Large project "Big"');
    expect(await gridTotal(await projectScope(ADMIN, (await findProjectByName("Big"))!.id))).toBe(2500);
  });

  it(
    "queues taking positions out of the originals of every project that keeps none, or of one; refuses one that keeps them",
    { timeout: CLI_MS },
    async () => {
      const keeps = (await findProjectByName("Acme System"))!.id;
      await db().updateTable("projects").set({ keep_gps: 1 }).where("id", "=", keeps).execute();
      const queued = async () =>
        (await db().selectFrom("jobs").select("payload").where("type", "=", POSITIONS_JOB).execute()).map(
          (j) => (JSON.parse(j.payload) as { projectId: number }).projectId,
        );
      const keepingNone = (await db().selectFrom("projects").select("id").where("keep_gps", "=", 0).execute()).map((p) => p.id);
      expect(keepingNone.length).toBeGreaterThan(1);
      expect(await koala("remove-positions")).toContain(`Queued for ${keepingNone.length} project(s)`);
      expect((await queued()).sort()).toEqual(keepingNone.sort());

      const acme = (await findProjectByName("Acme"))!.id;
      expect(await koala("remove-positions", "--project", "Acme")).toContain("Queued for 1 project(s)");
      expect((await queued()).filter((id) => id === acme)).toHaveLength(2);

      const refused = await koala("remove-positions", "--project", "Acme System").then(
        () => null,
        (e: { code: number; stderr: string }) => e,
      );
      expect(refused?.code).not.toBe(0);
      expect(refused?.stderr).toContain('"Acme System" keeps positions');
      expect(await queued()).not.toContain(keeps);
    },
  );

  it("fails with a clear message and a non-zero exit on bad input", { timeout: CLI_MS }, async () => {
    const failure = await koala("add-member", "--project", "Nope", "--email", "ana@example.com").then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(failure?.code).not.toBe(0);
    expect(failure?.stderr).toMatch(/No project named "Nope"/);
  });
});
