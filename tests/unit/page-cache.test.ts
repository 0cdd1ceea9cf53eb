import { describe, expect, it } from "vitest";
import { PageCache, piecesOf, withNonce } from "~/lib/page-cache.server";

const NONCE = "n0nceN0nceN0nceN0nce==";
const entry = (text: string, version = "") => {
  const { parts, bytes } = piecesOf(text, NONCE);
  return { version, parts, headers: {}, bytes };
};
const textOf = (e: { parts: Buffer[] } | null) => (e ? Buffer.concat(withNonce(e.parts, NONCE).body).toString() : null);

describe("a kept page", () => {
  it("comes back with the answer's nonce wherever the render's was, the length counted in bytes", () => {
    const html = `<script nonce="${NONCE}">a</script><p>Café ×</p><script nonce="${NONCE}">b</script>`;
    const { parts, bytes } = piecesOf(html, NONCE);
    expect(parts).toHaveLength(3);
    expect(bytes).toBe(Buffer.byteLength(html));
    const { body, length } = withNonce(parts, "fresh");
    const answer = Buffer.concat(body);
    expect(answer.toString()).toBe(html.replaceAll(NONCE, "fresh"));
    expect(length).toBe(answer.length);
  });

  it("is one buffer of its own, whatever its size (a small page does not pin a slab of Node's shared pool)", () => {
    const { parts, bytes } = piecesOf(`<p>${NONCE}</p>`, NONCE);
    expect(parts.every((p) => p.buffer === parts[0]!.buffer)).toBe(true);
    expect(parts[0]!.buffer.byteLength).toBe(bytes);
  });
});

describe("PageCache", () => {
  it("drops the least recently used page first once over its bytes, a read counting as a use", () => {
    const size = entry("x".repeat(100)).bytes;
    const cache = new PageCache(100, size * 2);
    cache.set("a", entry("a".repeat(100)));
    cache.set("b", entry("b".repeat(100)));
    expect(textOf(cache.get("a", ""))).toBe("a".repeat(100));
    cache.set("c", entry("c".repeat(100)));
    expect(cache.get("b", "")).toBeNull();
    expect(textOf(cache.get("a", ""))).toBe("a".repeat(100));
    expect(textOf(cache.get("c", ""))).toBe("c".repeat(100));
    expect(cache.size).toEqual({ entries: 2, bytes: size * 2 });
  });

  it("keeps to its number of entries, counts a replaced page once, and never keeps a page larger than itself", () => {
    const cache = new PageCache(2, 1_000_000);
    for (const key of ["a", "b", "c"]) cache.set(key, entry(key));
    expect(cache.get("a", "")).toBeNull();
    cache.set("c", entry("cc"));
    expect(cache.size).toEqual({ entries: 2, bytes: 1 + 2 });
    const small = new PageCache(10, 50);
    small.set("big", entry("x".repeat(51)));
    expect(small.get("big", "")).toBeNull();
    expect(small.size).toEqual({ entries: 0, bytes: 0 });
  });

  it("drops a page of another version on sight", () => {
    const cache = new PageCache(10, 1_000_000);
    cache.set("k", entry("old", "v1"));
    expect(cache.get("k", "v2")).toBeNull();
    expect(cache.get("k", "v1")).toBeNull();
    expect(cache.size).toEqual({ entries: 0, bytes: 0 });
  });
});
