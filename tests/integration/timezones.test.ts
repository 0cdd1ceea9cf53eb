import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { migrationsFor } from "~/db/migrations.server";
import { approveRegistration } from "~/models/registrations.server";
import { choiceOptions, resolveChoices } from "~/models/reference.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject, makeUser } from "../helpers/fixtures";

/**
 * The time-zone list by IANA's current names (Asia/Kolkata, not Asia/Calcutta): a new database is made with them,
 * and migration 015 brings an older one there without losing any stored choice (profiles point at a row by id,
 * applications keep the name as text).
 */
describe.each(dialects)("time zones by their current names (%s)", (dialect) => {
  let t: TestDatabase;
  const zone = (name: string) =>
    db().selectFrom("timezones").select(["id", "name", "offset_hours"]).where("name", "=", name).executeTakeFirst();
  const userZone = async (id: number) =>
    (await db().selectFrom("users").select("timezone_id").where("id", "=", id).executeTakeFirstOrThrow()).timezone_id;
  const application = (email: string, timezone: string) =>
    db()
      .insertInto("registrations")
      .values({
        name: "Ravi",
        surname: "Kumar",
        email,
        country_code: "+91",
        mobile: "821234567",
        country: "IN",
        timezone,
        utc_offset: 5.5,
        org_unit: "Research",
        language: "English",
        iso_code: "en",
        client: "Acme",
        sim_use: "Shelf photos",
        status: "submitted",
        created_at: Date.now(),
        ip: null,
      })
      .returning("id")
      .executeTakeFirstOrThrow();

  beforeAll(async () => {
    t = await freshDatabase(dialect);
  }, 90_000);
  afterAll(async () => {
    await t.drop();
  });

  it("makes a new database's list with the current names, and the forms offer them", async () => {
    expect(await zone("Asia/Kolkata")).toMatchObject({ offset_hours: 5.5 });
    expect(await zone("Asia/Kathmandu")).toMatchObject({ offset_hours: 5.75 });
    expect(await zone("Asia/Calcutta")).toBeUndefined();
    const labels = (await choiceOptions()).timezones.map((o) => o.label);
    expect(labels).toEqual(expect.arrayContaining(["Asia/Kolkata (UTC+5:30)", "Asia/Kathmandu (UTC+5:45)", "Europe/Kyiv (UTC+2)"]));
    expect(labels.filter((l) => /Calcutta|Katmandu|Kiev/.test(l))).toEqual([]);
  });

  it("renames an older database's legacy zones in place, keeping every profile's and application's zone", async () => {
    // An older database: rows by the names the runtime listed then, one legacy row beside its current one, one zone missing.
    const kolkata = (await zone("Asia/Kolkata"))!;
    await db().updateTable("timezones").set({ name: "Asia/Calcutta" }).where("id", "=", kolkata.id).execute();
    const kyiv = (await zone("Europe/Kyiv"))!;
    const kiev = await db()
      .insertInto("timezones")
      .values({ name: "Europe/Kiev", offset_hours: 2 })
      .returning("id")
      .executeTakeFirstOrThrow();
    await db().deleteFrom("timezones").where("name", "=", "Asia/Kathmandu").execute();
    const inKolkata = await makeUser("user", { timezone_id: kolkata.id });
    const inKiev = await makeUser("user", { timezone_id: kiev.id });
    const waiting = await application("ravi@example.com", "Asia/Calcutta");

    await migrationsFor(dialect)["015-current-zone-names"]!.up(db());

    expect(await zone("Asia/Kolkata")).toMatchObject({ id: kolkata.id, offset_hours: 5.5 });
    expect(await zone("Asia/Calcutta")).toBeUndefined();
    expect(await userZone(inKolkata.user.id)).toBe(kolkata.id);
    expect(await zone("Europe/Kiev")).toBeUndefined();
    expect(await userZone(inKiev.user.id)).toBe(kyiv.id);
    expect(await zone("Asia/Kathmandu")).toMatchObject({ offset_hours: 5.75 });
    expect(
      (await db().selectFrom("registrations").select("timezone").where("id", "=", waiting.id).executeTakeFirstOrThrow()).timezone,
    ).toBe("Asia/Kolkata");
    // A profile's stored choice still validates: it is posted by id.
    const choices = await resolveChoices({ country: "IN", timezone: String(kolkata.id), language: "en", org_unit: "Research" });
    expect(choices.bad).toBeNull();
    // Run again: nothing left to change.
    const before = await db().selectFrom("timezones").select(["id", "name"]).orderBy("id").execute();
    await migrationsFor(dialect)["015-current-zone-names"]!.up(db());
    expect(await db().selectFrom("timezones").select(["id", "name"]).orderBy("id").execute()).toEqual(before);
  });

  it("approves an application stored under a legacy name into the zone's current row", async () => {
    const admin = await makeUser("admin");
    const project = await makeProject();
    const waiting = await application("sita@example.com", "Asia/Katmandu");
    const user = await approveRegistration(admin.actor, waiting.id, [{ projectId: project.id, role: "viewer" }]);
    expect(await userZone(user.id)).toBe((await zone("Asia/Kathmandu"))!.id);
  });
});
