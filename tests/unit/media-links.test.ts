import { createHash } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig, setConfig } from "~/config.server";
import { gridThumbKey, thumbOfGridKey } from "~/lib/media";
import { isValidKey } from "~/services/storage.server";
import { signingWindow, thumbUrl, thumbUrlEpoch, withThumbUrls } from "~/web/media-links.server";

const SECRET = "k".repeat(40);
const KEY = `thumbs/ab/cd/${"ab".repeat(32)}.webp`;
const PATH = `/media/7/thumbs~ab~cd~${"ab".repeat(32)}.webp`;
const use = (env: Record<string, string>) => setConfig(loadConfig({ DATA_DIR: "/tmp/koala-media-links", ...env }));

describe("thumbnail URLs as pages show them", () => {
  afterAll(() => use({}));

  it("are the plain media URL unless MEDIA_OFFLOAD=signed, and then a grid's cards carry none (each is made from its key where shown)", () => {
    const project = { kind: "project" } as Parameters<typeof withThumbUrls>[0];
    for (const offload of ["off", "x-accel"]) {
      use({ MEDIA_OFFLOAD: offload });
      expect(thumbUrl(7, KEY)).toBe(PATH);
      expect(thumbUrlEpoch()).toBe("");
      expect(withThumbUrls(project, [{ id: 7, thumbKey: KEY }])).toEqual([{ id: 7, thumbKey: KEY }]);
    }
  });

  it("carry, when signed, the expiry at the end of the window and nginx's secure_link MD5 of expiry, path and secret", () => {
    use({ MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: SECRET, MEDIA_URL_SECONDS: "600" });
    const now = Date.UTC(2026, 10, 28, 9, 4, 10);
    const { expiresAt } = signingWindow(600_000, now);
    const e = expiresAt / 1000;
    const s = createHash("md5").update(`${e}${PATH} ${SECRET}`).digest("base64url");
    expect(thumbUrl(7, KEY, now)).toBe(`${PATH}?e=${e}&s=${s}`);
    expect(s).toMatch(/^[\w-]{22}$/);
  });

  it("stay the same for half of MEDIA_URL_SECONDS and are valid at least that long, then change", () => {
    use({ MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: SECRET, MEDIA_URL_SECONDS: "600" });
    const start = Date.UTC(2026, 10, 28, 9, 0, 0); // a window's start: 300 s windows from the epoch
    const first = thumbUrl(7, KEY, start);
    expect(thumbUrl(7, KEY, start + 299_999)).toBe(first);
    const next = thumbUrl(7, KEY, start + 300_000);
    expect(next).not.toBe(first);
    const expiry = (url: string) => Number(/e=(\d+)/.exec(url)![1]) * 1000;
    expect(expiry(first) - (start + 299_999)).toBeGreaterThanOrEqual(300_000);
    expect(expiry(next) - expiry(first)).toBe(300_000);
  });

  it("differ with the secret and the path, so one image's signature opens no other", () => {
    use({ MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: SECRET });
    const now = Date.now();
    const project = { kind: "project" } as Parameters<typeof withThumbUrls>[0];
    const [a, b] = withThumbUrls(project, [
      { id: 7, thumbKey: KEY },
      { id: 8, thumbKey: KEY },
    ]).map((c) => c.thumbUrl!.split("&s=")[1]);
    expect(a).not.toBe(b);
    const shared = { kind: "shared" } as Parameters<typeof withThumbUrls>[0];
    expect(withThumbUrls(shared, [{ id: 7, thumbKey: KEY }])[0]).not.toHaveProperty("thumbUrl");
    const mine = thumbUrl(7, KEY, now);
    use({ MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: "m".repeat(40) });
    expect(thumbUrl(7, KEY, now)).not.toBe(mine);
  });
});

describe("grid thumbnail keys", () => {
  const hash = "ab".repeat(32);
  it("follow the thumbnail's key, turned or not, and lead back to it; no other key has one", () => {
    for (const thumb of [`thumbs/ab/ab/${hash}.webp`, `thumbs/ab/ab/${hash}-r90.webp`]) {
      const grid = gridThumbKey(thumb);
      expect(grid).toBe(thumb.replace(/\.webp$/, "-w240.webp"));
      expect(isValidKey(grid), grid).toBe(true);
      expect(thumbOfGridKey(grid)).toBe(thumb);
      expect(thumbOfGridKey(thumb)).toBeNull();
    }
    for (const other of [`previews/ab/ab/${hash}-w240.webp`, `originals/ab/ab/${hash}-w240.webp`, `thumbs/ab/ab/${hash}-w480.webp`])
      expect(thumbOfGridKey(other), other).toBeNull();
    // Three variants are never a stored key: the path stays as narrow as before.
    expect(isValidKey(`thumbs/ab/ab/${hash}-r90-w240-w240.webp`)).toBe(false);
  });

  it("are signed apart from the thumbnail's for a grid's cards when MEDIA_OFFLOAD=signed", () => {
    use({ MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: SECRET });
    const project = { kind: "project" } as Parameters<typeof withThumbUrls>[0];
    const [card] = withThumbUrls(project, [{ id: 7, thumbKey: KEY }]);
    expect(card!.gridUrl).toMatch(new RegExp(`^/media/7/thumbs~ab~cd~${"ab".repeat(32)}-w240\\.webp\\?e=\\d+&s=[\\w-]{22}$`));
    expect(card!.gridUrl!.split("&s=")[1]).not.toBe(card!.thumbUrl!.split("&s=")[1]);
    use({});
  });
});
