// The HTTP server: Express in front of the Remix request handler. It exists (rather than
// remix-serve) for the per-request CSP nonce, the cross-site POST check, the client IP,
// start-up work (migrations, demo seed, job runner) and a graceful shutdown. See docs/decisions/0002.
import { randomBytes } from "node:crypto";
import { createRequestHandler } from "@remix-run/express";
import compression from "compression";
import express from "express";

const dev = process.argv.includes("--dev");
const viteDevServer = dev
  ? await import("vite").then((vite) => vite.createServer({ server: { middlewareMode: true } }))
  : undefined;
const loadBuild = viteDevServer
  ? () => viteDevServer.ssrLoadModule("virtual:remix/server-build")
  : () => import("./build/server/index.js");

const build = await loadBuild();
const { config } = build.entry.module;
const cfg = config();
const services = await build.entry.module.boot();

const app = express();
app.disable("x-powered-by");
if (cfg.trustProxy) app.set("trust proxy", true);

// The browser PUTs uploads to presigned URLs: with S3 storage that is the bucket's endpoint (path style) or
// the bucket's own host under it (virtual-host style).
function bucketOrigins(s3) {
  if (!s3) return [];
  if (!s3.endpoint) return ["https://*.amazonaws.com"];
  const url = new URL(s3.endpoint);
  return s3.forcePathStyle ? [url.origin] : [`${url.protocol}//${s3.bucket}.${url.host}`];
}
const connectSrc = ["'self'", ...(dev ? ["ws:", "wss:"] : []), ...bucketOrigins(cfg.s3)].join(" ");

// Security headers, with a fresh nonce for every response.
app.use((req, res, next) => {
  const nonce = randomBytes(16).toString("base64");
  res.locals.nonce = nonce;
  const csp = [
    "default-src 'self'",
    `script-src 'self' 'nonce-${nonce}'`,
    `style-src 'self' 'nonce-${nonce}'`,
    // Style attributes only (the virtual grid positions rows with them); no inline <style> without the nonce.
    "style-src-attr 'unsafe-inline'",
    "img-src 'self' data: blob:",
    "media-src 'self' blob:",
    "font-src 'self'",
    `connect-src ${connectSrc}`,
    "form-action 'self'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "object-src 'none'",
  ].join("; ");
  res.setHeader("Content-Security-Policy", csp);
  res.setHeader("X-Content-Type-Options", "nosniff");
  res.setHeader("Referrer-Policy", "same-origin");
  res.setHeader("X-Frame-Options", "DENY");
  res.setHeader("Cross-Origin-Opener-Policy", "same-origin");
  res.setHeader("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
  if (cfg.production) res.setHeader("Strict-Transport-Security", "max-age=31536000; includeSubDomains");
  next();
});

// Cross-site form posts are refused: SameSite=Lax alone lets same-site subdomains and old browsers through.
app.use((req, res, next) => {
  if (["GET", "HEAD", "OPTIONS"].includes(req.method)) return next();
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
  if (allowed) return next();
  res.status(403).type("text/plain").send("Cross-site request refused.");
});

// Request bodies are small (forms, JSON) except the two upload paths, which stream with their own per-file
// limits: everything else is refused above 1 MiB, and must say its length up front so it is never buffered blind.
const MAX_BODY = 1024 * 1024;
const streamsItsBody = (req) =>
  (req.method === "PUT" && req.path === "/storage/upload") ||
  (req.method === "POST" && /^\/upload\/\d+$/.test(req.path) && /^multipart\/form-data/i.test(req.get("content-type") ?? ""));
app.use((req, res, next) => {
  if (["GET", "HEAD", "OPTIONS"].includes(req.method) || streamsItsBody(req)) return next();
  const length = req.get("content-length");
  if (length === undefined && req.get("transfer-encoding")) return res.status(411).type("text/plain").send("A Content-Length is required.");
  if (Number(length ?? 0) > MAX_BODY) return res.status(413).type("text/plain").send("The request is too large.");
  next();
});

app.get("/healthz", (_req, res) => res.type("text/plain").send("ok"));

// The terms PDF is shown inside the dashboard's dialog: it alone may be framed, by Koala's own pages.
app.get("/terms.pdf", (_req, res, next) => {
  res.setHeader("Content-Security-Policy", "default-src 'none'; frame-ancestors 'self'");
  res.setHeader("X-Frame-Options", "SAMEORIGIN");
  next();
});

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
    res.status(answer.status).set(answer.headers);
    if (!answer.body) return res.end(answer.status === 404 ? "Not found" : undefined);
    answer.body.on("error", next).pipe(res);
  } catch (err) {
    next(err);
  }
});

app.use(compression());
if (viteDevServer) app.use(viteDevServer.middlewares);
else {
  app.use("/assets", express.static("build/client/assets", { immutable: true, maxAge: "1y", index: false }));
  app.use(express.static("build/client", { maxAge: "1h", index: false }));
}

app.all(
  "*",
  createRequestHandler({
    build: viteDevServer ? loadBuild : build,
    mode: dev ? "development" : "production",
    getLoadContext: (req, res) => ({ nonce: res.locals.nonce, clientIp: req.ip ?? req.socket.remoteAddress ?? "" }),
  }),
);

const server = app.listen(cfg.port, cfg.host, () => {
  process.stdout.write(`Koala is listening on ${cfg.appUrl} (bound to ${cfg.host}:${cfg.port})\n`);
});

let closing = false;
async function shutdown(signal) {
  if (closing) return;
  closing = true;
  process.stdout.write(`${signal}: shutting down\n`);
  server.close();
  server.closeIdleConnections?.();
  await services.shutdown().catch(() => {});
  await viteDevServer?.close();
  process.exit(0);
}
process.on("SIGTERM", () => shutdown("SIGTERM"));
process.on("SIGINT", () => shutdown("SIGINT"));
