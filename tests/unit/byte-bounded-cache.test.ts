import { describe, expect, it } from "vitest";
import { ByteBoundedCache } from "~/lib/bounded-cache";

const entry = (bytes: number) => ({ bytes });

describe("ByteBoundedCache", () => {
  it("drops the least recently used entry past its byte bound; a read counts as a use", () => {
    const cache = new ByteBoundedCache<{ bytes: number }>(10, 100);
    cache.set("a", entry(40));
    cache.set("b", entry(40));
    expect(cache.get("a")).toEqual(entry(40)); // a is now the newest
    cache.set("c", entry(40)); // 120 > 100: b, the least recently used, goes
    expect(cache.get("b")).toBeNull();
    expect(cache.get("a")).not.toBeNull();
    expect(cache.size).toEqual({ entries: 2, bytes: 80 });
  });

  it("drops the oldest past its entry bound, never keeps an entry larger than the whole bound, and counts a replaced entry once", () => {
    const cache = new ByteBoundedCache<{ bytes: number }>(2, 1000);
    cache.set("a", entry(1));
    cache.set("b", entry(1));
    cache.set("c", entry(1));
    expect(cache.get("a")).toBeNull();
    cache.set("huge", entry(1001));
    expect(cache.get("huge")).toBeNull();
    cache.set("b", entry(5));
    expect(cache.size).toEqual({ entries: 2, bytes: 6 });
    cache.delete("b");
    cache.delete("missing");
    expect(cache.size).toEqual({ entries: 1, bytes: 1 });
  });
});
