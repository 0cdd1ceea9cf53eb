import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { db } from "~/db/connection.server";
import { SYSTEM } from "~/models/actor";
import { addGroupRole, admitPerson, type ProviderPerson } from "~/models/sso.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeProject } from "../helpers/fixtures";

/**
 * Company sign-in's admission under concurrency, on each dialect: two first sign-ins of one person at once make one
 * account and one link; two subjects racing for one address link only one of them.
 */
describe.each(dialects)("company sign-in admission (%s)", (dialect) => {
  let t: TestDatabase;
  let project: { id: number };
  const person = (subject: string, email: string): ProviderPerson => ({
    provider: "acme",
    issuer: "https://idp.acme.test",
    subject,
    email,
    name: "Race",
    surname: "Condition",
    groups: ["staff"],
  });

  beforeAll(async () => {
    t = await freshDatabase(dialect);
    project = await makeProject();
    await addGroupRole(SYSTEM, { provider: "acme", group: "staff", projectId: project.id, role: "viewer" });
  });
  afterAll(async () => t.drop());

  // Several rounds, so that the interleavings READ COMMITTED allows (a link committed between two statements of
  // another sign-in) come up in one run; one round of four passed for weeks before CI met one.
  it("makes one account and one link when the same person's first sign-ins run at once", async () => {
    for (let round = 0; round < 12; round++) {
      const subject = `same-${round}`;
      const email = `same-${round}@acme.test`;
      const results = await Promise.all(Array.from({ length: 6 }, () => admitPerson(person(subject, email), "create")));
      expect(results.map((r) => (r.admitted ? "admitted" : r.reason))).toEqual(Array(6).fill("admitted"));
      const ids = new Set(results.map((r) => (r.admitted ? r.user.id : 0)));
      expect(ids.size).toBe(1);
      expect(await db().selectFrom("users").select("id").where("email", "=", email).execute()).toHaveLength(1);
      expect(await db().selectFrom("sso_identities").select("subject").where("subject", "=", subject).execute()).toHaveLength(1);
      expect(
        await db()
          .selectFrom("project_members")
          .select("role")
          .where("user_id", "=", [...ids][0]!)
          .execute(),
      ).toEqual([{ role: "viewer" }]);
    }
  });

  it("links one subject only when two race for the same address", async () => {
    const results = await Promise.all([
      admitPerson(person("one", "shared@acme.test"), "create"),
      admitPerson(person("two", "shared@acme.test"), "create"),
    ]);
    expect(results.filter((r) => r.admitted)).toHaveLength(1);
    expect(results.filter((r) => !r.admitted).map((r) => !r.admitted && r.reason)).toEqual(["other_subject"]);
    const user = await db().selectFrom("users").select("id").where("email", "=", "shared@acme.test").executeTakeFirstOrThrow();
    expect(await db().selectFrom("sso_identities").select("subject").where("user_id", "=", user.id).execute()).toHaveLength(1);
  });
});
