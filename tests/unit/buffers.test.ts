import { describe, expect, it } from "vitest";
import { ownArrayBuffer, release } from "~/lib/buffers.server";

/** Node.js 22 has ES2024's ArrayBuffer.prototype.transfer; Node.js 20 (also supported) does not. */
const canTransfer = typeof (ArrayBuffer.prototype as { transfer?: unknown }).transfer === "function";

describe("release: a decoded picture's memory given back at once", () => {
  it("empties a buffer that has its ArrayBuffer to itself where transfer exists, and leaves it whole where not", () => {
    const picture = Buffer.alloc(1 << 20, 7);
    const whole = picture.buffer;
    release(picture);
    if (canTransfer) {
      expect(whole.byteLength).toBe(0); // detached
      expect(picture.length).toBe(0);
    } else {
      expect(picture.length).toBe(1 << 20);
      expect(picture[1000]).toBe(7);
    }
  });

  it("does nothing to a buffer released already", () => {
    const picture = Buffer.alloc(1 << 16);
    release(picture);
    expect(() => release(picture)).not.toThrow();
  });

  it("leaves a small buffer, which shares Node's pool with others, and every neighbour in that pool alone", () => {
    // Three in one slab (the pool starts a new slab when one is full: then again).
    let [before, small, after] = [Buffer.from("first"), Buffer.from("small"), Buffer.from("after")];
    while (before.buffer !== small.buffer || small.buffer !== after.buffer)
      [before, small, after] = [Buffer.from("first"), Buffer.from("small"), Buffer.from("after")];
    release(small);
    expect([before.toString(), small.toString(), after.toString()]).toEqual(["first", "small", "after"]);
  });

  it("leaves a view into a larger buffer alone, and the larger buffer with it", () => {
    const picture = Buffer.alloc(1 << 16, 3);
    const part = picture.subarray(10, 100);
    release(part);
    expect(part.length).toBe(90);
    expect(picture.length).toBe(1 << 16);
    expect(picture[50]).toBe(3);
  });
});

describe("ownArrayBuffer: the bytes handed on without a copy", () => {
  it("is the buffer's own ArrayBuffer, the same bytes, when nothing else shares it", () => {
    const picture = Buffer.alloc(8192, 9);
    const whole = ownArrayBuffer(picture);
    expect(whole).toBe(picture.buffer);
    expect(new Uint8Array(whole!)[8191]).toBe(9);
  });

  it("is null for a pooled buffer and for a view into another, whose ArrayBuffer holds more than their bytes", () => {
    expect(ownArrayBuffer(Buffer.from("pooled"))).toBeNull();
    expect(ownArrayBuffer(Buffer.alloc(8192).subarray(1))).toBeNull();
  });
});
