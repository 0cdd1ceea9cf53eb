import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { revokeUserSessions } from "~/models/sessions.server";
import { getUser, requireActor, signOut } from "~/sessions.server";
import { dialects, freshDatabase, type TestDatabase } from "../helpers/db";
import { makeUser } from "../helpers/fixtures";
import { sessionCookie } from "../helpers/server";

/**
 * The signed-in person is looked up once per request (sessions.server.ts). Remix hands each loader of a page its own
 * copy of the Request, so the lookup is shared through the load context, the one object all of them get.
 */
describe.each(dialects)("the session of a request (%s)", (dialect) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await freshDatabase(dialect);
  });
  afterAll(() => t.drop());

  it("is looked up once for all of a request's loaders, each with its own copy of the Request, and again for the next request", async () => {
    const { user } = await makeUser();
    const cookie = await sessionCookie(user.id);
    // What Remix gives each loader: a new Request with the same URL and headers.
    const copy = () => new Request("http://127.0.0.1/client/1?index", { headers: { Cookie: cookie } });
    const context = { clientIp: "203.0.113.7" };

    const layout = await requireActor(copy(), context);
    expect(layout).toMatchObject({ id: user.id, ip: "203.0.113.7" });
    // The session ends between the layout's loader and the page's: had the page's looked it up again (a lookup per
    // Request), it would have been sent to sign in halfway through one page.
    await revokeUserSessions(user.id);
    expect(await requireActor(copy(), context)).toMatchObject({ id: user.id, ip: "203.0.113.7" });
    // The next request has a context of its own, and sees the session ended.
    expect(await getUser(copy(), { clientIp: "203.0.113.7" })).toBeNull();
  });

  it("is forgotten by signing out, so what runs after it in the same request sees nobody signed in", async () => {
    const { user } = await makeUser();
    const cookie = await sessionCookie(user.id);
    const copy = () => new Request("http://127.0.0.1/terms", { method: "POST", headers: { Cookie: cookie } });
    const context = { clientIp: "203.0.113.8" };
    expect((await getUser(copy(), context))?.id).toBe(user.id);
    const answer = await signOut(copy(), context);
    expect([answer.status, answer.headers.get("Location")]).toEqual([302, "/login"]);
    expect(await getUser(copy(), context)).toBeNull();
  });
});
