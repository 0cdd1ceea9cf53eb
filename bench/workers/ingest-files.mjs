// Writes N deterministic 12-megapixel JPEGs (4000×3000, photo-like: smooth gradients plus seeded grain) for P6.
// Usage: node bench/workers/ingest-files.mjs <dir> <count>
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import sharp from "sharp";

const [dir, countArg] = process.argv.slice(2);
const count = Number(countArg ?? 12);
const W = 4000;
const H = 3000;
mkdirSync(dir, { recursive: true });

function mulberry32(seed) {
  return () => {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

for (let n = 0; n < count; n++) {
  const file = path.join(dir, `photo-${String(n).padStart(2, "0")}.jpg`);
  if (existsSync(file)) continue;
  const rnd = mulberry32(1000 + n);
  const raw = Buffer.alloc(W * H * 3);
  const fx = 2 + rnd() * 6;
  const fy = 2 + rnd() * 6;
  for (let y = 0; y < H; y++)
    for (let x = 0; x < W; x++) {
      const i = (y * W + x) * 3;
      const base = 128 + 90 * Math.sin((x / W) * fx + n) * Math.cos((y / H) * fy);
      const grain = (rnd() - 0.5) * 40;
      raw[i] = Math.max(0, Math.min(255, base + grain));
      raw[i + 1] = Math.max(0, Math.min(255, 255 - base + grain));
      raw[i + 2] = Math.max(0, Math.min(255, (x * 255) / W + grain));
    }
  writeFileSync(
    file,
    await sharp(raw, { raw: { width: W, height: H, channels: 3 } })
      .jpeg({ quality: 88 })
      .toBuffer(),
  );
}
