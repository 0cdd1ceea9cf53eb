import { createHash, randomBytes } from "node:crypto";
import { existsSync, readFileSync, rmSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gridThumbKey, mediaUrl } from "~/lib/media";
import { createBoard } from "~/models/boards.server";
import { boardScope } from "~/models/scope.server";
import { createShareLinks, revokeShareLink } from "~/models/share-links.server";
import { addImageFile } from "~/services/ingest.server";
import { freshDatabase, type TestDatabase } from "../helpers/db";
import { meta } from "../helpers/fixtures";
import { jpeg } from "../helpers/images";
import { startNginx, type RunningNginx } from "../helpers/nginx";
import { startAppServer, type AppServer } from "../helpers/server";
import { mediaOf, memberAndStranger } from "../helpers/media";

/**
 * MEDIA_OFFLOAD=x-accel behind the documented nginx configuration (docs/deploy/nginx.conf): the app checks access
 * as always and answers with X-Accel-Redirect and no bytes; nginx sends the file from its internal location with
 * the sandboxing headers. Downloads stay on the app's path. Needs the production build and nginx.
 */
describe("media sent by nginx once the app has checked access (MEDIA_OFFLOAD=x-accel)", () => {
  let t: TestDatabase;
  let app: AppServer;
  let nginx: RunningNginx;
  let cookie: string;
  let stranger: string;
  let thumb: string;
  let thumbKey: string;
  let original: string;
  let originalKey: string;
  let shared: { path: string; id: number; board: Awaited<ReturnType<typeof boardScope>> };
  let imageId: number;

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    const { editor, scope, ...people } = await memberAndStranger();
    ({ cookie, stranger } = people);
    imageId = await addImageFile(scope, await jpeg(640, 480, "#885522"), meta("Aisle"));
    const media = await mediaOf(imageId);
    ({ thumb, original } = media);
    thumbKey = media.keys.thumb_key;
    originalKey = media.keys.storage_key;
    const board = await boardScope(editor.actor, (await createBoard(scope, { title: "Aisles", imageIds: [imageId] })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "offload");
    shared = { path: link!.path, id: link!.id, board };
    app = await startAppServer(t, { MEDIA_OFFLOAD: "x-accel", TRUST_PROXY: "loopback" });
    nginx = await startNginx({ upstreamPorts: [app.port], objectsDir: path.join(t.dataDir, "objects") });
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await app?.stop();
    await t?.drop();
  });

  const get = (base: string, url: string, who = cookie) =>
    fetch(`${base}${url}`, { headers: who ? { Cookie: who } : {}, redirect: "manual" });
  const stored = (key: string) => readFileSync(path.join(t.dataDir, "objects", key));

  it("answers a signed-in member with X-Accel-Redirect and no bytes; nginx sends the file with the app's caching and its own sandbox", async () => {
    const direct = await get(app.base, thumb);
    expect(direct.status).toBe(200);
    expect(direct.headers.get("x-accel-redirect")).toBe(`/_koala-objects/${thumbKey}`);
    expect((await direct.arrayBuffer()).byteLength).toBe(0);

    const proxied = await get(nginx.base, thumb);
    expect(proxied.status).toBe(200);
    expect(proxied.headers.get("x-accel-redirect")).toBeNull();
    expect(Buffer.from(await proxied.arrayBuffer()).equals(stored(thumbKey))).toBe(true);
    expect(proxied.headers.get("content-type")).toBe("image/webp");
    expect(proxied.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    expect(proxied.headers.get("content-security-policy")).toContain("sandbox");
    expect(proxied.headers.get("x-content-type-options")).toBe("nosniff");
    // nginx's own validator: a revalidation is answered 304 by nginx.
    const etag = proxied.headers.get("etag")!;
    expect(etag).toBeTruthy();
    expect((await fetch(`${nginx.base}${thumb}`, { headers: { Cookie: cookie, "If-None-Match": etag } })).status).toBe(304);
  });

  it("checks access first: no session goes to sign-in, another project's member gets 404, and the internal location is unreachable", async () => {
    const anonymous = await get(nginx.base, thumb, "");
    expect(anonymous.status).toBe(302);
    expect(anonymous.headers.get("location")).toMatch(/^\/login\?redirectTo=/);
    const foreign = await get(nginx.base, thumb, stranger);
    expect(foreign.status).toBe(404);
    expect(await foreign.text()).not.toContain("RIFF");
    const inside = await get(nginx.base, `/_koala-objects/${thumbKey}`, cookie);
    expect(inside.status).toBe(404);
  });

  it("keeps a download on the app's path, where its limits hold", async () => {
    const direct = await get(app.base, `${original}?download`);
    expect(direct.headers.get("x-accel-redirect")).toBeNull();
    expect(direct.headers.get("content-disposition")).toMatch(/^attachment; filename="Aisle\.jpg"/);
    expect(Buffer.from(await direct.arrayBuffer()).equals(stored(originalKey))).toBe(true);
  });

  it("offloads a share link's images too, checked on every view: cut off at once when the link is revoked", async () => {
    const token = shared.path.split("/").at(-1)!;
    const url = `/shared-media/${token}/${imageId}/${thumbKey.replaceAll("/", "~")}`;
    const seen = await get(nginx.base, url, "");
    expect(seen.status).toBe(200);
    expect(seen.headers.get("cache-control")).toBe("private, no-cache");
    expect(seen.headers.get("referrer-policy")).toBe("no-referrer");
    expect(Buffer.from(await seen.arrayBuffer()).equals(stored(thumbKey))).toBe(true);
    await revokeShareLink(shared.board, shared.id);
    expect((await get(nginx.base, url, "")).status).toBe(404);
  });
});

/**
 * MEDIA_OFFLOAD=signed behind the documented nginx configuration with docs/deploy/nginx-signed-media.conf: the
 * thumbnails a page shows carry an expiry and a signature made when the loader checked access; nginx checks them
 * itself and sends the file without asking the app. Anything else under /media goes to the app as before.
 */
describe("thumbnails signed by the page and sent by nginx alone (MEDIA_OFFLOAD=signed)", () => {
  const secret = randomBytes(24).toString("base64url");
  let t: TestDatabase;
  let app: AppServer;
  let nginx: RunningNginx;
  let cookie: string;
  let stranger: string;
  let projectId: number;
  let imageId: number;
  let thumb: string;
  let thumbKey: string;
  let gridThumb: string;
  let otherThumb: string;
  let others: string[];
  let sharedPage: string;

  beforeAll(async () => {
    t = await freshDatabase("sqlite");
    const { editor, scope, project, ...people } = await memberAndStranger();
    ({ cookie, stranger } = people);
    projectId = project.id;
    const second = await addImageFile(scope, await jpeg(320, 240, "#225588"), meta("Shelf"));
    imageId = await addImageFile(scope, await jpeg(640, 480, "#885522"), meta("Aisle"));
    const media = await mediaOf(imageId);
    thumbKey = media.keys.thumb_key;
    thumb = media.thumb;
    gridThumb = mediaUrl(imageId, gridThumbKey(thumbKey));
    otherThumb = (await mediaOf(second)).thumb;
    others = [media.preview, media.original];
    const board = await boardScope(editor.actor, (await createBoard(scope, { title: "Aisles", imageIds: [imageId, second] })).id);
    const [link] = await createShareLinks(board, [null], { expiry: "30", allowDownload: true, showMetadata: true }, "signed");
    sharedPage = link!.path;
    app = await startAppServer(t, { MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: secret, MEDIA_URL_SECONDS: "600", TRUST_PROXY: "loopback" });
    nginx = await startNginx({ upstreamPorts: [app.port], objectsDir: path.join(t.dataDir, "objects"), signedMediaSecret: secret });
  }, 60_000);
  afterAll(async () => {
    await nginx?.stop();
    await app?.stop();
    await t?.drop();
  });

  const get = (url: string, who = "") => fetch(`${nginx.base}${url}`, { headers: who ? { Cookie: who } : {}, redirect: "manual" });
  /** nginx's secure_link check, made by hand: what a forger would need the secret for. */
  const signature = (expires: number, url: string, key = secret) => createHash("md5").update(`${expires}${url} ${key}`).digest("base64url");
  const signedCards = async () => {
    const grid = (await (await get(`/api/grid?project=${projectId}&limit=10`, cookie)).json()) as {
      cards: { id: number; thumbUrl: string; gridUrl: string }[];
    };
    return new Map(grid.cards.map((c) => [c.id, c]));
  };
  const signedThumbs = async () => new Map([...(await signedCards())].map(([id, c]) => [id, c.thumbUrl]));

  it("gives the grid signed thumbnail URLs, in its JSON and in the page without JavaScript, valid for at least half of MEDIA_URL_SECONDS", async () => {
    const before = Date.now();
    const url = (await signedThumbs()).get(imageId)!;
    const after = Date.now();
    const match = /^(\/media\/\d+\/[^?]+)\?e=(\d+)&s=([\w-]{22})$/.exec(url);
    expect(match?.[1]).toBe(thumb);
    // Signed at the start of the current half of its life (a whole number of seconds with MEDIA_URL_SECONDS even): it
    // expires at least half a life after the request was sent, and at most a whole life after the answer came.
    const expires = Number(match![2]) * 1000;
    expect(expires - before).toBeGreaterThanOrEqual(300_000);
    expect(expires - after).toBeLessThanOrEqual(600_000);
    // The page signs in the window of its own request, which may have turned since (every 300 s): so its URL is the
    // one before it or the one after it.
    const page = (await (await get(`/client/${projectId}`, cookie)).text()).replaceAll("&amp;", "&");
    const later = (await signedCards()).get(imageId)!;
    // The picture's src is the grid thumbnail's signed URL; its srcset lists that and the thumbnail's.
    const srcset = new RegExp(`src="(${gridThumb}\\?[^"]+)" srcSet="([^"]+)"`, "i").exec(page);
    expect(srcset, "the page shows the thumbnails with signed URLs").not.toBeNull();
    const [, shownGrid, shownSet] = srcset!;
    const shownThumb = /^\S+ 240w, (\S+) 480w$/.exec(shownSet!)?.[1];
    expect(shownSet).toBe(`${shownGrid} 240w, ${shownThumb} 480w`);
    expect([url, later.thumbUrl]).toContain(shownThumb);
    for (const signed of [shownGrid, later.gridUrl]) expect(signed).toMatch(new RegExp(`^${gridThumb}\\?e=\\d+&s=[\\w-]{22}$`));
  });

  it("sends a signed thumbnail from nginx without asking the app: no cookie needed, the file's bytes, immutable, sandboxed", async () => {
    const url = (await signedThumbs()).get(imageId)!;
    const res = await get(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(t.dataDir, "objects", thumbKey)))).toBe(true);
    expect(res.headers.get("content-type")).toBe("image/webp");
    expect(res.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cross-origin-resource-policy")).toBe("same-origin");
    // The same path without its signature is the app's: sign-in first.
    expect((await get(thumb)).status).toBe(302);
  });

  it("sends a signed grid thumbnail from nginx alone too, and one not made yet through the app, which makes it", async () => {
    const gridKey = gridThumbKey(thumbKey);
    const { gridUrl } = (await signedCards()).get(imageId)!;
    const res = await get(gridUrl);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(readFileSync(path.join(t.dataDir, "objects", gridKey)))).toBe(true);
    expect(res.headers.get("cache-control")).toBe("private, max-age=31536000, immutable");
    // As for an image stored before there were grid thumbnails: nginx finds no file, and hands the request on.
    rmSync(path.join(t.dataDir, "objects", gridKey));
    const anonymous = await get(gridUrl);
    expect(anonymous.status, "without a session the app sends to sign-in, and makes nothing").toBe(302);
    expect(existsSync(path.join(t.dataDir, "objects", gridKey))).toBe(false);
    expect((await get(gridUrl, stranger)).status).toBe(404);
    const member = await get(gridUrl, cookie);
    expect(member.status).toBe(200);
    expect(await sharp(Buffer.from(await member.arrayBuffer())).metadata()).toMatchObject({ format: "webp", width: 240 });
    expect(existsSync(path.join(t.dataDir, "objects", gridKey))).toBe(true);
    expect((await get(gridUrl)).status, "from then on nginx sends it without asking").toBe(200);
  });

  it("hands a wrong, borrowed or expired signature to the app, which checks the session and access as always", async () => {
    const signed = await signedThumbs();
    const [, query] = signed.get(imageId)!.split("?");
    const expires = Number(/e=(\d+)/.exec(query!)![1]);
    const forged = [
      `${thumb}?e=${expires}&s=${"A".repeat(22)}`,
      `${otherThumb}?${query}`, // another image's path with this one's signature
      `${thumb}?e=${expires + 3600}&s=${/s=([\w-]+)/.exec(query!)![1]}`, // a later expiry, the same signature
      `${thumb}?e=${expires}&s=${signature(expires, thumb, "not-the-secret-not-the-secret-00")}`,
    ];
    const past = Math.floor(Date.now() / 1000) - 60;
    const expired = `${thumb}?e=${past}&s=${signature(past, thumb)}`;
    for (const url of [...forged, expired]) {
      const anonymous = await get(url);
      expect(anonymous.status, url).toBe(302);
      expect(anonymous.headers.get("location"), url).toMatch(/^\/login\?redirectTo=/);
      expect((await get(url, stranger)).status, url).toBe(404);
      const member = await get(url, cookie);
      expect(member.status, url).toBe(200);
      expect(member.headers.get("content-type"), url).toBe("image/webp");
    }
    // A signature made with the right secret is taken as it is: the check is nginx's, the test's hand-made one agrees.
    const fresh = Math.floor(Date.now() / 1000) + 120;
    expect((await get(`${thumb}?e=${fresh}&s=${signature(fresh, thumb)}`)).status).toBe(200);
  });

  it("signs thumbnails alone: a preview or an original signed with the right secret still goes to the app", async () => {
    const expires = Math.floor(Date.now() / 1000) + 120;
    for (const url of others) {
      const res = await get(`${url}?e=${expires}&s=${signature(expires, url)}`);
      expect(res.status, url).toBe(302);
      expect(res.headers.get("location"), url).toMatch(/^\/login\?redirectTo=/);
    }
  });

  it("never puts a signed URL on a share link's page: its visitors are checked on every image, so a revoked link ends at once", async () => {
    const page = await get(sharedPage);
    expect(page.status).toBe(200);
    const html = await page.text();
    expect(html).toContain(`/shared-media/`);
    expect(html).not.toMatch(/\/media\/\d+\//);
    expect(html).not.toContain("?e=");
  });

  it("never signs for the internal location: /_koala-signed/ is unreachable from outside", async () => {
    const [, query] = (await signedThumbs()).get(imageId)!.split("?");
    expect((await get(`/_koala-signed/${thumbKey}?${query}`, cookie)).status).toBe(404);
  });
});
