import { readFileSync } from "node:fs";
import path from "node:path";
import { gzipSync } from "node:zlib";

/**
 * The JavaScript a browser loads for a server-rendered Remix page: every /assets/*.js file the HTML
 * references as a script src, a modulepreload href, or an import in an inline module script, read from the
 * build's client folder and gzipped (zlib's default level, as the server's compression middleware sends it).
 */
export function pageJavaScript(html: string, clientDir: string) {
  const patterns = [
    /(?:href|src)="(\/assets\/[^"]+\.js)"/g,
    /import\s*\(\s*"(\/assets\/[^"]+\.js)"\s*\)/g,
    /(?:from|import)\s*"(\/assets\/[^"]+\.js)"/g,
  ];
  const urls = [...new Set(patterns.flatMap((re) => [...html.matchAll(re)].map((m) => m[1]!)))].sort();
  const files = urls.map((url) => {
    const body = readFileSync(path.join(clientDir, url));
    return { url, bytes: body.length, gzip: gzipSync(body).length };
  });
  return {
    files,
    bytes: files.reduce((n, f) => n + f.bytes, 0),
    gzip: files.reduce((n, f) => n + f.gzip, 0),
  };
}
