// What every request leaves behind (issue 26): its request id (echoed as X-Request-Id), its count and duration in
// /metrics by route id and status, and, with ACCESS_LOG, one JSON line in the log. The route is a Remix route id or a
// fixed label (media, shared-media, shared-page, static, healthz, readyz, metrics, other), never a URL: bounded label
// values for Prometheus, and no share-link or sign-in token in a metric. The logged path has its tokens masked and no
// query string (a query may carry anything).
import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { ServerBuild } from "@remix-run/node";

export interface InfoLog {
  info: (msg: string, fields: Record<string, unknown>) => void;
}

interface Observed {
  id: string;
  started: bigint;
  route: string;
  bytes: number;
}
const observed = new WeakMap<IncomingMessage, Observed>();

/** A request id a proxy may hand on: a plain token, at most 128 characters. */
const SANE_ID = /^[A-Za-z0-9._-]{1,128}$/;

/** The request's id (made at its arrival), for log lines about it. */
export const requestIdOf = (req: IncomingMessage) => observed.get(req)?.id;

/** Names the route a request went to, for its metrics and access-log line (the last one named counts). */
export function setRoute(req: IncomingMessage, route: string) {
  const o = observed.get(req);
  if (o) o.route = route;
}

/** Path segments that are bearer tokens: share links, their images, sign-in links, export downloads. */
const TOKEN_PATH = /^\/(shared-board|shared-media|auth|exports)\/[^/]+/;
/** A path fit for the log: no query string, the token segment masked. */
export const loggedPath = (url: string) => (url.split("?")[0] ?? "").replace(TOKEN_PATH, "/$1/[token]");

const byteLength = (chunk: unknown, encoding: unknown) =>
  typeof chunk === "string"
    ? Buffer.byteLength(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
    : chunk instanceof Uint8Array
      ? chunk.byteLength
      : 0;

/**
 * Called first for every request on the main listener. `trusted(req)`: the request came through a trusted proxy
 * (TRUST_PROXY), whose X-Request-Id is then taken when it is a sane token; otherwise an id is made. `record` counts
 * the answer in the metrics; `accessLog` writes its line.
 */
export function observer({
  trusted,
  record,
  log,
  accessLog,
}: {
  trusted: (req: IncomingMessage) => boolean;
  record: (route: string, status: number, seconds: number) => void;
  log: InfoLog;
  accessLog: boolean;
}) {
  return (req: IncomingMessage, res: ServerResponse) => {
    const sent = req.headers["x-request-id"];
    const id = typeof sent === "string" && SANE_ID.test(sent) && trusted(req) ? sent : randomUUID();
    const o: Observed = { id, started: process.hrtime.bigint(), route: "other", bytes: 0 };
    observed.set(req, o);
    res.setHeader("X-Request-Id", id);
    // The body's bytes as they go onto the socket (after compression, which wraps these two in its turn).
    const write = res.write;
    const end = res.end;
    res.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
      o.bytes += byteLength(chunk, rest[0]);
      return (write as (...args: unknown[]) => boolean).call(this, chunk, ...rest);
    } as ServerResponse["write"];
    res.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
      if (typeof chunk !== "function") o.bytes += byteLength(chunk, rest[0]);
      return (end as (...args: unknown[]) => ServerResponse).call(this, chunk, ...rest);
    } as ServerResponse["end"];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      const seconds = Number(process.hrtime.bigint() - o.started) / 1e9;
      record(o.route, res.statusCode, seconds);
      if (!accessLog) return;
      log.info("request", {
        requestId: o.id,
        method: req.method,
        route: o.route,
        path: loggedPath(req.url ?? ""),
        status: res.statusCode,
        bytes: o.bytes,
        ms: Math.round(seconds * 10_000) / 10,
        // The client went away before the whole answer was sent.
        ...(res.writableFinished ? {} : { aborted: true }),
      });
    };
    res.once("finish", finish);
    res.once("close", finish);
  };
}

/**
 * The Remix route id a path goes to: the leaf Remix's router would match (a single-fetch data request, `/x.data` or
 * `/_root.data`, by the page it loads); "other" when nothing matches. @remix-run/router's matchRoutes flattens and
 * ranks the whole route tree on every call (0.1–0.6 ms here, per request); its flattening, ranking and path patterns
 * are done once per build instead (explodeOptionalSegments, computeScore, rankRouteBranches and compilePath, as
 * @remix-run/router 1.23 has them; tests/unit/route-ids.test.ts holds the two to the same answers).
 */
export function routeIds(routes: ServerBuild["routes"], basename = "/"): (pathname: string) => string {
  interface Branch {
    id: string;
    score: number;
    order: number[];
    matcher: RegExp;
  }
  const branches: Branch[] = [];
  const all = Object.values(routes);
  const walk = (parentId: string | undefined, parentPath: string, parentOrder: number[]) =>
    all
      .filter((r) => r.parentId === parentId)
      .forEach((route, index) => {
        const relative = route.path ?? "";
        for (const exploded of relative.includes("?") ? explodeOptional(relative) : [relative]) {
          const path = joinPaths(parentPath, exploded.startsWith("/") ? exploded.slice(parentPath.length) : exploded);
          const order = [...parentOrder, index];
          if (!route.index) walk(route.id, path, order);
          if (route.path === undefined && !route.index) continue;
          branches.push({
            id: route.id,
            score: score(path, route.index === true),
            order,
            matcher: compile(path, route.caseSensitive === true),
          });
        }
      });
  walk(undefined, "", []);
  branches.sort((a, b) => (a.score !== b.score ? b.score - a.score : siblingOrder(a.order, b.order)));
  const base = basename.replace(/\/+$/, "");
  return (pathname) => {
    let path = pathname.endsWith(".data") ? pathname.replace(/\.data$/, "").replace(/^\/_root$/, "/") : pathname;
    if (base) {
      if (!path.toLowerCase().startsWith(base.toLowerCase())) return "other";
      path = path.slice(base.length) || "/";
    }
    const decoded = decodePath(path);
    return branches.find((b) => b.matcher.test(decoded))?.id ?? "other";
  };
}

const joinPaths = (...paths: string[]) => paths.join("/").replace(/\/\/+/g, "/");
const decodePath = (value: string) => {
  try {
    return value
      .split("/")
      .map((v) => decodeURIComponent(v).replace(/\//g, "%2F"))
      .join("/");
  } catch {
    return value;
  }
};
function explodeOptional(path: string): string[] {
  const [first = "", ...rest] = path.split("/");
  const optional = first.endsWith("?");
  const required = first.replace(/\?$/, "");
  if (rest.length === 0) return optional ? [required, ""] : [required];
  const restExploded = explodeOptional(rest.join("/"));
  const result = restExploded.map((sub) => (sub === "" ? required : [required, sub].join("/")));
  if (optional) result.push(...restExploded);
  return result.map((exploded) => (path.startsWith("/") && exploded === "" ? "/" : exploded));
}
function score(path: string, index: boolean) {
  const segments = path.split("/");
  let total = segments.length + (segments.includes("*") ? -2 : 0) + (index ? 2 : 0);
  for (const segment of segments) if (segment !== "*") total += /^:[\w-]+$/.test(segment) ? 3 : segment === "" ? 1 : 10;
  return total;
}
const siblingOrder = (a: number[], b: number[]) =>
  a.length === b.length && a.slice(0, -1).every((n, i) => n === b[i]) ? a[a.length - 1]! - b[b.length - 1]! : 0;
function compile(path: string, caseSensitive: boolean) {
  let source =
    "^" +
    path
      .replace(/\/*\*?$/, "")
      .replace(/^\/*/, "/")
      .replace(/[\\.*+^${}|()[\]]/g, "\\$&")
      .replace(/\/:([\w-]+)(\?)?/g, (_, _name, optional) => (optional ? "/?([^\\/]+)?" : "/([^\\/]+)"));
  if (path.endsWith("*")) source += path === "*" || path === "/*" ? "(.*)$" : "(?:\\/(.+)|\\/*)$";
  else source += "\\/*$";
  return new RegExp(source, caseSensitive ? undefined : "i");
}

/** The route ids of a build, made once per build (the dev server's builds change). */
const finders = new WeakMap<ServerBuild["routes"], (pathname: string) => string>();
export function remixRouteId(build: ServerBuild, pathname: string): string {
  let find = finders.get(build.routes);
  if (!find) finders.set(build.routes, (find = routeIds(build.routes, build.basename)));
  return find(pathname);
}

/** Whether an Authorization header carries this bearer token, compared in constant time (both hashed first). */
export function bearerMatches(header: string | undefined, token: string): boolean {
  const given = /^Bearer\s+(\S+)\s*$/i.exec(header ?? "")?.[1] ?? "";
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(token)) && given.length > 0;
}
