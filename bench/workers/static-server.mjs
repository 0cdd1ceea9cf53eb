// Baseline for P2: node:http answering every request with the same bytes from memory.
// Usage: node static-server.mjs <file> <port> <content-type>
import { readFileSync } from "node:fs";
import http from "node:http";

const [file, port, type] = process.argv.slice(2);
const body = readFileSync(file);
const headers = { "Content-Type": type, "Content-Length": body.length };
http
  .createServer((req, res) => {
    res.writeHead(200, headers);
    res.end(body);
  })
  .listen(Number(port), "127.0.0.1");
process.on("SIGTERM", () => process.exit(0));
