import { describe, expect, it } from "vitest";
import { limiter } from "~/lib/limiter";

/** The process's bounded resources (decodes, OCR threads) are handed out by one limiter. */
describe("limiter", () => {
  it("runs at most its count at once, the others in the order they came, and frees a place when a work fails", async () => {
    const limit = limiter(2);
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const gates: (() => void)[] = [];
    const works = Array.from({ length: 5 }, (_, i) =>
      limit(async () => {
        started.push(i);
        running += 1;
        most = Math.max(most, running);
        await new Promise<void>((resolve) => gates.push(resolve));
        running -= 1;
        if (i === 0) throw new Error("first fails");
        return i;
      }),
    );
    const settle = async () => {
      for (let k = 0; k < 5; k++) await Promise.resolve();
    };
    await settle();
    expect(started).toEqual([0, 1]);
    // Each work let go gives its place to the next that came.
    for (let released = 0; released < 5; released++) {
      gates.shift()!();
      await settle();
    }
    const results = await Promise.allSettled(works);
    expect(results.map((r) => (r.status === "fulfilled" ? r.value : "failed"))).toEqual(["failed", 1, 2, 3, 4]);
    expect(started).toEqual([0, 1, 2, 3, 4]);
    expect(most).toBe(2);
  });

  it("takes at least one at a time (a count of 0 from a machine that reports no cores)", async () => {
    const limit = limiter(0);
    await expect(limit(async () => "ran")).resolves.toBe("ran");
  });
});
