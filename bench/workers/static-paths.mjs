// Baseline for P10: node:http answering each of several paths with its own bytes from memory.
// Usage: node static-paths.mjs <manifest.json> <port>; the manifest maps a path to { file, type }.
import { readFileSync } from "node:fs";
import http from "node:http";

const [manifest, port] = process.argv.slice(2);
const answers = new Map(
  Object.entries(JSON.parse(readFileSync(manifest, "utf8"))).map(([path, { file, type }]) => {
    const body = readFileSync(file);
    return [path, { body, headers: { "Content-Type": type, "Content-Length": body.length } }];
  }),
);
const first = [...answers.values()][0];
http
  .createServer((req, res) => {
    const answer = answers.get(req.url) ?? first;
    res.writeHead(200, answer.headers);
    res.end(answer.body);
  })
  .listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
