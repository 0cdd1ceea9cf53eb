// Baseline for P7: node:http answering every request with the given files read from disk one after another and
// written to the socket (a plain concatenation, no archive format), with the exact Content-Length; /healthz
// answers ok.
// Usage: node concat-server.mjs <port> <file>...
import { createReadStream, statSync } from "node:fs";
import http from "node:http";
import { pipeline } from "node:stream/promises";

const [port, ...files] = process.argv.slice(2);
const total = files.reduce((sum, f) => sum + statSync(f).size, 0);
http
  .createServer(async (req, res) => {
    req.resume();
    if (req.url === "/healthz") return res.end("ok");
    res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": total });
    try {
      for (const file of files) await pipeline(createReadStream(file), res, { end: false });
      res.end();
    } catch {
      res.destroy();
    }
  })
  .listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
