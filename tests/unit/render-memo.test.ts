import type { EntryContext } from "@remix-run/node";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { memoizable } from "~/web/render-memo.server";

/** What the memo may keep (web/render-memo.server.ts): the rules on the request and the render's context alone. */
const context = (loaderData: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  ({
    staticHandlerContext: { loaderData, actionData: null, errors: null, ...extra },
    serverHandoffStream: new ReadableStream(),
  }) as unknown as EntryContext;
const get = (init: RequestInit = {}) => new Request("http://koala.test/client/1", { headers: { Cookie: "koala_session=s" }, ...init });

describe("memoizable", () => {
  beforeAll(() => setConfig(loadConfig({ DATA_DIR: "/tmp/koala-memo-unit", SESSION_SECRET: "x".repeat(32), RENDER_CACHE_MB: "8" })));

  it("takes a signed-in visitor's clean GET", () => {
    expect(memoizable(get(), 200, context({ root: { user: { id: 1 } }, "routes/x": [1, { a: "b" }] }), "nonce")).toBe(true);
  });

  it("never takes a page whose data holds a promise, however deep it sits", () => {
    for (const data of [{ p: Promise.resolve(1) }, { a: { b: [1, { c: Promise.resolve(2) }] } }, [Promise.resolve(3)]])
      expect(memoizable(get(), 200, context({ root: {}, "routes/x": data }), "nonce"), JSON.stringify(data)).toBe(false);
  });

  it("never takes a HEAD, a visitor without cookies, another status, an action's answer, an error or a missing nonce", () => {
    const data = context({ root: {} });
    expect(memoizable(get({ method: "HEAD" }), 200, data, "nonce")).toBe(false);
    expect(memoizable(new Request("http://koala.test/client/1"), 200, data, "nonce")).toBe(false);
    expect(memoizable(get(), 404, data, "nonce")).toBe(false);
    expect(memoizable(get(), 200, context({ root: {} }, { actionData: { x: 1 } }), "nonce")).toBe(false);
    expect(memoizable(get(), 200, context({ root: {} }, { errors: { root: new Error("x") } }), "nonce")).toBe(false);
    expect(memoizable(get(), 200, data, "")).toBe(false);
  });
});
