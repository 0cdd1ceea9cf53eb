// One load run with autocannon's programmatic API, in its own process (the harness pins it to the load core).
// Usage: node load.mjs '{"url": "...", "connections": 50, "seconds": 5, "headers": {...}, "paths": [...]}'  → one JSON line.
// With `paths`, each connection requests them in turn (a mix), against the url's origin. With `uniqueParam`, every
// request's URL gets that query parameter with a number no other request of the run had.
import autocannon from "autocannon";

const opts = JSON.parse(process.argv[2]);
if (opts.paths && opts.uniqueParam) throw new Error("paths and uniqueParam do not go together");
let counter = 0;
function unique(url, param) {
  return (req) => {
    url.searchParams.set(param, String(counter++));
    return { ...req, path: url.pathname + url.search };
  };
}
const cpuBefore = process.cpuUsage();
const wallBefore = performance.now();
const result = await autocannon({
  url: opts.url,
  connections: opts.connections,
  duration: opts.seconds,
  headers: opts.headers ?? {},
  ...(opts.paths ? { requests: opts.paths.map((path) => ({ method: "GET", path })) } : {}),
  ...(opts.uniqueParam ? { requests: [{ method: "GET", setupRequest: unique(new URL(opts.url), opts.uniqueParam) }] } : {}),
});
const summary = {
  rps: result.requests.total / result.duration,
  requests: result.requests.total,
  seconds: result.duration,
  p50: result.latency.p50,
  p99: result.latency.p99,
  max: result.latency.max,
  bytesPerSecond: result.throughput.average,
  non2xx: result.non2xx,
  errors: result.errors,
  timeouts: result.timeouts,
  /** Share of one core the load generator used: near 1 means it, not the server, may set the pace. */
  loadCpu: (() => {
    const used = process.cpuUsage(cpuBefore);
    return (used.user + used.system) / 1000 / (performance.now() - wallBefore);
  })(),
};
process.stdout.write(`${JSON.stringify(summary)}\n`);
