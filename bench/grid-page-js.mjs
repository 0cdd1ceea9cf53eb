// JavaScript a browser downloads for a project grid page, gzipped: every module the server-rendered
// page preloads or imports, measured from build/client. Usage: node bench/grid-page-js.mjs <page.html>
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";

const html = readFileSync(process.argv[2], "utf8");
const files = new Set([...html.matchAll(/(?:href|src)="(\/assets\/[^"]+\.js)"/g), ...html.matchAll(/import\("(\/assets\/[^"]+\.js)"\)/g), ...html.matchAll(/from "(\/assets\/[^"]+\.js)"/g)].map((m) => m[1]));
let raw = 0;
let gz = 0;
for (const f of files) {
  const body = readFileSync(`build/client${f}`);
  raw += body.length;
  gz += gzipSync(body, { level: 9 }).length;
}
console.log(`${files.size} JavaScript files: ${(raw / 1024).toFixed(1)} KiB, ${(gz / 1024).toFixed(1)} KiB gzipped`);
