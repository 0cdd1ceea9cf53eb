// P7's client: makes N downloads one after another (node:http, one keep-alive connection), reads every body to its
// end and prints one JSON line: per download the time to the first body byte, the total time and the bytes, and
// the share of its core this process used. Anything but a 200 with the whole announced length is an error.
// Usage: node download-client.mjs '{"url": "...", "method": "POST", "headers": {...}, "body": "...", "count": 2}'
import http from "node:http";

const spec = JSON.parse(process.argv[2]);
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

function download() {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const req = http.request(spec.url, { method: spec.method ?? "GET", headers: spec.headers ?? {}, agent }, (res) => {
      const headersMs = performance.now() - started;
      let firstByteMs = null;
      let bytes = 0;
      res.on("data", (chunk) => {
        firstByteMs ??= performance.now() - started;
        bytes += chunk.length;
      });
      res.on("error", reject);
      res.on("end", () => {
        const length = Number(res.headers["content-length"]);
        if (res.statusCode !== 200) return reject(new Error(`${spec.url} answered ${res.statusCode}`));
        if (bytes !== length) return reject(new Error(`${spec.url}: ${bytes} bytes of the ${length} announced`));
        resolve({ headersMs, firstByteMs, seconds: (performance.now() - started) / 1000, bytes });
      });
    });
    req.on("error", reject);
    req.end(spec.body ?? undefined);
  });
}

const cpuBefore = process.cpuUsage();
const wallBefore = performance.now();
const downloads = [];
for (let i = 0; i < (spec.count ?? 1); i++) downloads.push(await download());
const used = process.cpuUsage(cpuBefore);
const clientCpu = (used.user + used.system) / 1000 / (performance.now() - wallBefore);
agent.destroy();
process.stdout.write(`${JSON.stringify({ downloads, clientCpu })}\n`);
