import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { verifyPassword } from "~/lib/crypto.server";
import { DEMO_EMAIL, DEMO_PASSWORD, seedDemo } from "~/services/demo.server";
import { storage } from "~/services/storage.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";

const PROJECTS = ["Acme Beverages", "Northwind Retail", "Globex Packaging"];
const BOARDS = ["Client review", "Highlights", "Shelf study"];
const PER_PROJECT = 2;

/** Row counts of everything the demo seed writes. */
async function counts() {
  const n = async (
    table: "users" | "projects" | "project_members" | "images" | "boards" | "board_images" | "attributes" | "registrations",
  ) =>
    Number(
      (
        await db()
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as("n"))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return {
    users: await n("users"),
    projects: await n("projects"),
    members: await n("project_members"),
    images: await n("images"),
    boards: await n("boards"),
    boardImages: await n("board_images"),
    attributes: await n("attributes"),
    registrations: await n("registrations"),
  };
}

describe.each(dialects)("demo seed (%s)", (dialect) => {
  let t: TestDatabase;
  const log: string[] = [];
  beforeAll(async () => {
    t = await freshDatabase(dialect);
    await seedDemo({ imagesPerProject: PER_PROJECT, log: (line) => log.push(line) });
  }, 120_000);
  afterAll(() => t.drop());

  it("creates the demo user: active, with the documented password and TOTP, terms not yet accepted; prints a working code command", async () => {
    const user = await db().selectFrom("users").selectAll().where("email", "=", DEMO_EMAIL).executeTakeFirstOrThrow();
    expect(user).toMatchObject({ status: "active", role: "user", terms_acknowledged_at: null });
    expect(await verifyPassword(DEMO_PASSWORD, user.password_hash)).toBe(true);
    expect(user.totp_secret).toMatch(/^[A-Z2-7]{16,}$/);
    expect(log.join("\n")).toContain(`TOTP secret ${user.totp_secret}`);
    expect(log.join("\n")).toContain(`npm run koala -- totp-code --email ${DEMO_EMAIL}`);
  });

  it("creates three projects, the demo user a manager of each, with the same four attributes", async () => {
    const projects = await db()
      .selectFrom("projects")
      .innerJoin("project_members", "project_members.project_id", "projects.id")
      .innerJoin("users", "users.id", "project_members.user_id")
      .select(["projects.id", "projects.name", "project_members.role", "users.email"])
      .orderBy("projects.id")
      .execute();
    expect(projects.map((p) => [p.name, p.role, p.email])).toEqual(PROJECTS.map((name) => [name, "manager", DEMO_EMAIL]));
    for (const p of projects) {
      const attributes = await db().selectFrom("attributes").select("code").where("project_id", "=", p.id).orderBy("code").execute();
      expect(attributes.map((a) => a.code)).toEqual(["channel", "quality", "region", "season"]);
    }
  });

  it("gives each project its images, stored with their derivatives, described, with attribute values", async () => {
    const images = await db()
      .selectFrom("images")
      .innerJoin("projects", "projects.id", "images.project_id")
      .select(["images.id", "projects.name", "title", "description", "keywords", "ocr_text", "storage_key", "thumb_key", "preview_key"])
      .execute();
    expect(images).toHaveLength(PROJECTS.length * PER_PROJECT);
    for (const name of PROJECTS) expect(images.filter((i) => i.name === name)).toHaveLength(PER_PROJECT);
    for (const image of images) {
      expect(image.title).toMatch(/ in .+ #\d+$/);
      expect(image.description).not.toBe("");
      expect(JSON.parse(image.keywords).length).toBeGreaterThanOrEqual(1);
      for (const key of [image.storage_key, image.thumb_key, image.preview_key]) expect(await storage().size(key)).toBeGreaterThan(0);
    }
    const values = await db()
      .selectFrom("image_attribute_values")
      .innerJoin("attributes", "attributes.id", "image_attribute_values.attribute_id")
      .innerJoin("images", "images.id", "image_attribute_values.image_id")
      .select(["attributes.project_id as attributeProject", "images.project_id as imageProject", "value"])
      .execute();
    expect(values.length).toBeGreaterThan(0);
    // A value belongs to an attribute of the image's own project.
    for (const v of values) expect(v.attributeProject).toBe(v.imageProject);
  });

  it("gives each project three boards holding its images, one of them a client board", async () => {
    const boards = await db()
      .selectFrom("boards")
      .innerJoin("projects", "projects.id", "boards.project_id")
      .select(["boards.id", "boards.title", "boards.is_client_board", "projects.name", "projects.id as projectId"])
      .execute();
    for (const name of PROJECTS) {
      const own = boards.filter((b) => b.name === name);
      expect(own.map((b) => b.title).sort()).toEqual(BOARDS);
      expect(own.filter((b) => b.is_client_board === 1).map((b) => b.title)).toEqual(["Client review"]);
    }
    for (const board of boards) {
      const pinned = await db()
        .selectFrom("board_images")
        .innerJoin("images", "images.id", "board_images.image_id")
        .select("images.project_id")
        .where("board_id", "=", board.id)
        .execute();
      expect(pinned.length).toBeGreaterThanOrEqual(1);
      for (const p of pinned) expect(p.project_id).toBe(board.projectId);
    }
  });

  it("sets the login page's daily media", async () => {
    const media = await db().selectFrom("daily_media").select(["kind", "url"]).orderBy("position").execute();
    expect(media).toEqual([1, 2, 3].map((i) => ({ kind: "image", url: `/daily/daily-${i}.jpg` })));
  });

  it("does nothing the second time", async () => {
    const before = await counts();
    const again: string[] = [];
    await seedDemo({ imagesPerProject: PER_PROJECT, log: (line) => again.push(line) });
    expect(again).toEqual(["Demo library already present."]);
    expect(await counts()).toEqual(before);
    // The demo researcher and the demo admin; two applications wait in the admin console's queue.
    expect(before).toMatchObject({
      users: 2,
      registrations: 2,
      projects: 3,
      images: PROJECTS.length * PER_PROJECT,
      boards: 9,
      attributes: 12,
    });
  });
});
