// The HTTP server: Express in front of the Remix request handler. It exists (rather than
// remix-serve) for the per-request CSP nonce, the cross-site POST check, the client IP,
// start-up work (migrations, demo seed, job runner) and a graceful shutdown. See docs/decisions/0002. A share
// link's cached page is answered by a front ahead of Express (server/shared-page.ts, docs/decisions/0011).
//
// TypeScript, run by tsx under `npm run dev` and bundled by `npm run build` into build/server.js. It reaches the app
// only through the server build's entry module (typed as app/entry.server.tsx): importing app modules here would
// load a second copy of each, with its own configuration, database pool and caches (docs/decisions/0020).
import http from "node:http";
import path from "node:path";
import { pipeline, type Readable } from "node:stream";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { ServerBuild } from "@remix-run/node";
import compression from "compression";
import express, { type ErrorRequestHandler, type NextFunction, type Response } from "express";
// Express's own dependency: the front below takes the client address exactly as Express's req.ip does.
import proxyaddr from "proxy-addr";
import type * as Entry from "~/entry.server";
import { admission } from "./admission";
import { newNonce, securityHeaders } from "./headers";
import { drainer } from "./drain";
import { bearerMatches, observer, remixRouteId, requestIdOf, setRoute } from "./observe";
import { checkRequests, PUBLIC_API, remixHandler, streamsItsBody } from "./requests";
import { sharedPageFront } from "./shared-page";

/** The server build, whose entry module is app/entry.server.tsx. */
type KoalaBuild = ServerBuild & { entry: { module: typeof Entry } };
type MediaAnswer = Awaited<ReturnType<typeof Entry.mediaAnswer>>;

// server/index.ts and build/server.js both sit one folder below the project's root.
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const dev = process.argv.includes("--dev");
const viteDevServer = dev ? await import("vite").then((vite) => vite.createServer({ server: { middlewareMode: true } })) : undefined;
const loadBuild = (): Promise<KoalaBuild> =>
  viteDevServer
    ? (viteDevServer.ssrLoadModule("virtual:remix/server-build") as Promise<KoalaBuild>)
    : import(pathToFileURL(path.join(root, "build/server/index.js")).href);

const build = await loadBuild();
const { config, log } = build.entry.module;
const cfg = config();
const services = await build.entry.module.boot();

const app = express();
app.disable("x-powered-by");
// The client address as Express takes it for a configured hop count or list of proxies (TRUST_PROXY): never the
// left-most X-Forwarded-For entry, which the client itself writes.
app.set("trust proxy", cfg.trustProxy);

const headersFor = securityHeaders(cfg, { dev, providerOrigins: () => build.entry.module.providerOrigins() });
const drain = drainer();
// Each request's id, metrics and access-log line (server/observe.ts). A proxy's X-Request-Id is taken only from a
// proxy TRUST_PROXY trusts: the address the request came from, as Express judges the first hop.
const trustProxy = app.get("trust proxy fn") as (address: string, hop: number) => boolean;
const observe = observer({
  trusted: (req) => trustProxy(req.socket.remoteAddress ?? "", 0),
  record: (route, status, seconds) => build.entry.module.observeRequest(route, status, seconds),
  log,
  accessLog: cfg.accessLog,
});

// Security headers, with a fresh nonce for every response.
app.use((req, res, next) => {
  const nonce = newNonce();
  res.locals.nonce = nonce;
  for (const [name, value] of Object.entries(headersFor(nonce))) res.setHeader(name, value);
  next();
});

// Cross-site form posts are refused: SameSite=Lax alone lets same-site subdomains and old browsers through.
// The public API reads no cookie (a bearer token only), so a cross-site request can carry nothing of the visitor's.
app.use((req, res, next) => {
  if (["GET", "HEAD", "OPTIONS"].includes(req.method) || PUBLIC_API.test(req.path)) return next();
  const site = req.get("sec-fetch-site");
  const origin = req.get("origin");
  let allowed = true;
  if (site) allowed = site === "same-origin" || site === "none";
  else if (origin) {
    try {
      allowed = origin !== "null" && new URL(origin).host === req.get("host");
    } catch {
      allowed = false;
    }
  }
  if (!allowed) return res.status(403).type("text/plain").send("Cross-site request refused.");
  // Under `Referrer-Policy: no-referrer` (the shared-board pages: the token is in the URL) a browser sends
  // `Origin: null` with its own same-origin form posts. Sec-Fetch-Site vouched for this one, so the null goes
  // (Remix would otherwise take it for a forged origin and abort the action).
  if (origin === "null" && site === "same-origin") delete req.headers.origin;
  next();
});

// Methods, body sizes, types and syntax: a malformed request gets a clear 4xx here, before any route sees it.
app.use(checkRequests(log));

// Liveness: the process answers. Readiness: it can serve (the database and the object store answer, and it is not
// shutting down); a proxy or an orchestrator sends traffic elsewhere while it says 503.
app.get("/healthz", (req, res) => {
  setRoute(req, "healthz");
  res.type("text/plain").set("Cache-Control", "no-store").send("ok");
});
app.get("/readyz", async (req, res, next) => {
  setRoute(req, "readyz");
  try {
    const state = drain.draining ? { ready: false, shutdown: "draining" } : await (await entryModule()).readiness();
    res
      .status(state.ready ? 200 : 503)
      .set("Cache-Control", "no-store")
      .json(state);
  } catch (err) {
    next(err);
  }
});

// Everything dynamic below (the media routes and Remix) runs under admission control: a bounded number at once,
// a bounded queue and wait, a time limit, 503 + Retry-After beyond them. Static files are not limited.
const admit = admission(cfg.admission, log, streamsItsBody);
build.entry.module.watchAdmission(admit.stats);
build.entry.module.watchInFlight(() => drain.inFlight);
app.use("/media", (req, _res, next) => (setRoute(req, "media"), next()));
app.use("/shared-media", (req, _res, next) => (setRoute(req, "shared-media"), next()));
app.use(["/media", "/shared-media"], admit);

// The terms PDF is shown inside the dashboard's dialog: it alone may be framed, by Koala's own pages.
app.get("/terms.pdf", (_req, res, next) => {
  res.setHeader("Content-Security-Policy", "default-src 'none'; frame-ancestors 'self'");
  res.setHeader("X-Frame-Options", "SAMEORIGIN");
  next();
});

/**
 * A media answer onto the socket. pipeline() (not pipe()) so that a client that goes away also closes the file
 * being read, which gives back a download's place; a client's early close is not an error worth a log line.
 */
function sendMedia(answer: MediaAnswer, res: Response, next: NextFunction) {
  res.status(answer.status).set(answer.headers);
  if (!answer.body) return void res.end(answer.bytes ?? answer.text);
  pipeline(answer.body as Readable, res, (err) => {
    if (err && (err as NodeJS.ErrnoException).code !== "ERR_STREAM_PREMATURE_CLOSE") next(err);
  });
}

// Images: straight from Express (access-checked in the app's own code), not through the Remix pipeline.
app.get("/media/:imageId/:key", async (req, res, next) => {
  try {
    const entry = viteDevServer ? (await loadBuild()).entry.module : build.entry.module;
    const answer = await entry.mediaAnswer({
      cookie: req.get("cookie") ?? null,
      imageId: req.params.imageId,
      key: req.params.key,
      ifNoneMatch: req.get("if-none-match") ?? null,
      download: "download" in req.query,
      path: req.originalUrl,
    });
    sendMedia(answer, res, next);
  } catch (err) {
    next(err);
  }
});

// A share link's images: the same fast path, checked against the link (valid, image on its board now).
app.get("/shared-media/:sharedUrl/:imageId/:key", async (req, res, next) => {
  try {
    const entry = viteDevServer ? (await loadBuild()).entry.module : build.entry.module;
    const answer = await entry.sharedMediaAnswer({
      cookie: null,
      sharedUrl: req.params.sharedUrl,
      imageId: req.params.imageId,
      key: req.params.key,
      ifNoneMatch: req.get("if-none-match") ?? null,
      download: "download" in req.query,
      path: req.originalUrl,
      clientIp: req.ip ?? null,
    });
    sendMedia(answer, res, next);
  } catch (err) {
    next(err);
  }
});

const compress = compression();
app.use(compress);

/**
 * Prometheus metrics (docs/operations.md): only with METRICS_TOKEN set, and only for a request that bears it. Unset,
 * /metrics is any unknown path (the app's 404). Not under admission control, so a busy server can still say so.
 */
const metricsAnswer = async (res: http.ServerResponse) => {
  const { contentType, body } = await (await entryModule()).metricsText();
  res.writeHead(200, { "Content-Type": contentType, "Cache-Control": "no-store" }).end(body);
};
app.get("/metrics", async (req, res, next) => {
  const token = cfg.metrics.token;
  if (!token) return next();
  setRoute(req, "metrics");
  if (!bearerMatches(req.get("authorization"), token))
    return void res
      .status(401)
      .set({ "WWW-Authenticate": 'Bearer realm="metrics"', "Cache-Control": "no-store" })
      .type("text/plain")
      .send("A bearer token is required.");
  try {
    await metricsAnswer(res);
  } catch (err) {
    next(err);
  }
});

if (viteDevServer) app.use(viteDevServer.middlewares);
else {
  const assets = express.static("build/client/assets", { immutable: true, maxAge: "1y", index: false });
  app.use("/assets", (req, res, next) => (setRoute(req, "static"), assets(req, res, next)));
  // Only paths that name a file (favicon.ico, robots.txt, …): a stat() per page request adds up under load.
  const publicFiles = express.static("build/client", { maxAge: "1h", index: false });
  app.use((req, res, next) => (/\.[a-z0-9]+$/i.test(req.path) ? (setRoute(req, "static"), publicFiles(req, res, next)) : next()));
}

app.all(
  "*",
  async (req, _res, next) => {
    try {
      setRoute(req, remixRouteId(viteDevServer ? await loadBuild() : build, req.path));
      next();
    } catch (err) {
      next(err);
    }
  },
  admit,
  remixHandler({
    build: viteDevServer ? loadBuild : build,
    mode: dev ? "development" : "production",
    getLoadContext: (req, res) => ({
      nonce: res.locals.nonce,
      clientIp: req.ip ?? req.socket.remoteAddress ?? "",
      sharedPage: req.sharedPage ?? null,
      memoizeRenders: !dev,
      requestId: requestIdOf(req),
    }),
  }),
);

// Anything that escaped a handler: one log line, a plain 500, and the process goes on.
const lastResort: ErrorRequestHandler = (err, req, res, _next) => {
  log.error("request failed", {
    requestId: requestIdOf(req),
    method: req.method,
    path: req.path,
    error: err instanceof Error ? err.message : String(err),
  });
  if (res.headersSent) return void res.destroy();
  res.status(500).type("text/plain").set("Cache-Control", "no-store").send("Server error");
};
app.use(lastResort);
process.on("unhandledRejection", (err) => log.error("unhandled rejection", { error: err instanceof Error ? err.message : String(err) }));
// An exception nothing caught leaves the process in a state nobody knows: say so once and exit non-zero, so the
// supervisor starts a clean one (Node's own advice). Carrying on turned a closed log pipe into a busy loop: each
// failed log write raised again (the log itself now treats a closed pipe as the end of logging: log.server.ts).
let dying = false;
process.on("uncaughtException", (err: Error) => {
  if (dying) return;
  dying = true;
  try {
    log.error("uncaught exception: exiting", { error: err?.message, stack: err?.stack });
  } finally {
    process.exit(1);
  }
});

// A share link's cached page is answered ahead of Express; everything else (and a page to render) goes to Express.
const entryModule = async () => (viteDevServer ? (await loadBuild()).entry.module : build.entry.module);
const sharedPage = sharedPageFront({
  entry: entryModule,
  headersFor,
  newNonce,
  compress,
  clientIp: (req) => proxyaddr(req, app.get("trust proxy fn")),
});
const server = http.createServer((req, res) => {
  // Each layer that must hear a response end listens once for its 'close' (observe, drain, admission, download
  // slots, Remix's abort, compression, writeBody's wait for room): eleven on a streamed page, over Node's warning
  // threshold of ten, and none of them added per chunk.
  res.setMaxListeners(20);
  observe(req, res);
  drain.track(req, res);
  sharedPage(req, res).then(
    (answered) => (answered ? setRoute(req, "shared-page") : app(req, res)),
    (err) => {
      log.error("shared page failed", { path: req.url?.split("?")[0], error: err instanceof Error ? err.message : String(err) });
      if (!res.headersSent) app(req, res);
      else res.destroy();
    },
  );
});
// A response whose client has taken none of its bytes for RESPONSE_IDLE_SECONDS is cut: a reader that stopped
// reading would otherwise hold its socket, its open file and its download place for good. Node suppresses the
// timeout while a write still moves, however slowly; a socket idle with nothing to send (the app still working, a
// keep-alive wait) is left alone here.
server.setTimeout(cfg.responseIdleMs, (socket) => {
  if (socket.writableLength === 0) return;
  log.warn("response cut", { reason: `the client read nothing for ${cfg.responseIdleMs / 1000} s`, pending: socket.writableLength });
  socket.destroy();
});
server.listen(cfg.port, cfg.host, () => {
  log.info(`Koala is listening on ${cfg.appUrl}`, { host: cfg.host, port: cfg.port });
});

// METRICS_PORT: /metrics alone, without a token, on a listener of its own (for a scraper on a private network).
const metricsServer = cfg.metrics.port
  ? http
      .createServer((req, res) => {
        if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
          res.writeHead(404, { "Content-Type": "text/plain" }).end("Not found");
          return;
        }
        metricsAnswer(res).catch((err: unknown) => {
          log.error("metrics failed", { error: err instanceof Error ? err.message : String(err) });
          if (!res.headersSent) res.writeHead(500, { "Content-Type": "text/plain" });
          res.end();
        });
      })
      .listen(cfg.metrics.port, cfg.host, () => log.info("metrics listening", { host: cfg.host, port: cfg.metrics.port }))
  : null;

/**
 * SIGTERM/SIGINT: readiness goes 503 at once, the listener closes, requests in flight and running jobs get
 * SHUTDOWN_GRACE_SECONDS to finish (jobs still running then are handed back for another worker), then the database
 * closes. What had to be cut is logged.
 */
let closing = false;
async function shutdown(signal: NodeJS.Signals) {
  if (closing) return;
  closing = true;
  const graceMs = cfg.shutdownGraceMs;
  log.info("shutting down", { signal, graceSeconds: graceMs / 1000 });
  const started = Date.now();
  metricsServer?.close();
  metricsServer?.closeAllConnections();
  const [cut] = await Promise.all([drain.drain(server, graceMs), services.runner?.stop({ graceMs })]);
  for (const request of cut) log.warn("request cut by shutdown", request);
  await services.shutdown({ graceMs: 0 }).catch((err: unknown) => log.error("shutdown failed", { error: String(err) }));
  await viteDevServer?.close();
  log.info("shut down", { signal, seconds: (Date.now() - started) / 1000, cut: cut.length });
  process.exit(0);
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
