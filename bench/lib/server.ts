import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { deploySite, mainConf, nginxPath } from "../../tests/helpers/nginx";
import { appEnv, type Dataset } from "./datasets";
import { assertPortFree, start, waitForHttp, type Started } from "./proc";
import type { Context } from "./types";

export interface Server {
  url: string;
  proc: Started;
  stop(): Promise<void>;
}

/**
 * The built production server (the snapshot under bench/.cache/app) on a dataset, pinned to the server core.
 * Development mode keeps SMTP optional; the job runner is off and the sign-in rate limits are out of the way.
 * With BENCH_CPU_PROF=1 it writes a V8 CPU profile to bench/.cache/profiles when stopped.
 */
export async function startApp(ctx: Context, ds: Dataset, port: number, extraEnv: Record<string, string> = {}): Promise<Server> {
  await assertPortFree(port);
  const url = `http://127.0.0.1:${port}`;
  const env = {
    ...process.env,
    ...appEnv(ds),
    NODE_ENV: "production" as const,
    PORT: String(port),
    HOST: "127.0.0.1",
    APP_URL: url,
    JOB_RUNNER: "false",
    RATE_LIMIT_PER_IP: "1000000",
    RATE_LIMIT_PER_ADDRESS: "1000000",
    ...extraEnv,
  };
  const proc = start(ctx.cores.server, process.execPath, [...profileArgs(ctx), "build/server.js"], { cwd: ctx.appDir, env });
  await waitForHttp(`${url}/healthz`, proc);
  return { url, proc, stop: () => proc.stop() };
}

/** Node's flags for an app server: with BENCH_CPU_PROF=1 a V8 CPU profile in bench/.cache/profiles when it stops. */
export const profileArgs = (ctx: Context) =>
  process.env.BENCH_CPU_PROF ? ["--cpu-prof", `--cpu-prof-dir=${path.join(ctx.cache, "profiles")}`] : [];

/** node:http serving one file's bytes from memory (the P2 baseline), pinned to the server core. */
export async function startStatic(ctx: Context, file: string, port: number, contentType: string): Promise<Server> {
  await assertPortFree(port);
  const proc = start(ctx.cores.server, process.execPath, [
    path.join(ctx.root, "bench/workers/static-server.mjs"),
    file,
    String(port),
    contentType,
  ]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`, proc);
  return { url, proc, stop: () => proc.stop() };
}

/** node:http serving several paths, each with one file's bytes from memory (the P10 baseline), pinned to the server core. */
export async function startStaticPaths(ctx: Context, manifest: string, port: number): Promise<Server> {
  await assertPortFree(port);
  const proc = start(ctx.cores.server, process.execPath, [path.join(ctx.root, "bench/workers/static-paths.mjs"), manifest, String(port)]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/`, proc);
  return { url, proc, stop: () => proc.stop() };
}

/**
 * nginx serving one file with sendfile (the P4 ceiling): an instance of our own, one worker, pinned to the
 * server core, with its config, pid, logs and temp folders under bench/.cache/nginx.
 */
export async function startNginx(
  ctx: Context,
  file: string,
  port: number,
  urlPath: string,
  headers: Record<string, string>,
): Promise<Server> {
  await assertPortFree(port);
  const dir = path.join(ctx.cache, "nginx");
  mkdirSync(path.join(dir, "tmp"), { recursive: true });
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"].map((t) => `  ${t}_temp_path ${dir}/tmp/${t};`).join("\n");
  const extra = Object.entries(headers)
    .map(([k, v]) => `      add_header ${k} "${v}";`)
    .join("\n");
  const conf = `daemon off;
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  keepalive_requests 1000000;
${temp}
  types { image/webp webp; text/html html; }
  server {
    listen 127.0.0.1:${port};
    location = ${urlPath} {
      alias ${file};
${extra}
    }
  }
}
`;
  const confFile = path.join(dir, "nginx.conf");
  writeFileSync(confFile, conf);
  const proc = start(ctx.cores.server, nginxPath() ?? "nginx", ["-p", dir, "-c", confFile, "-e", path.join(dir, "error.log")]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}${urlPath}`, proc, 15_000);
  return { url, proc, stop: () => proc.stop() };
}

/**
 * nginx with the documented site configuration (docs/deploy/nginx.conf) in front of app instances, as an operator
 * runs it (P4's offload side, P10-2, P12): pinned to the server core with the apps, files under `objectsDir`; with
 * `signedMediaSecret`, docs/deploy/nginx-signed-media.conf included (MEDIA_OFFLOAD=signed).
 */
export async function startNginxSite(
  ctx: Context,
  port: number,
  upstreams: number | number[],
  objectsDir: string,
  signedMediaSecret?: string,
): Promise<Server> {
  await assertPortFree(port);
  const dir = path.join(ctx.cache, "nginx-site");
  mkdirSync(dir, { recursive: true });
  const errorLog = path.join(dir, "error.log");
  const site = deploySite({ upstreamPorts: [upstreams].flat(), listen: `127.0.0.1:${port}`, objectsDir, signedMediaSecret });
  const confFile = path.join(dir, "nginx.conf");
  writeFileSync(confFile, mainConf(dir, site, errorLog));
  const proc = start(ctx.cores.server, nginxPath() ?? "nginx", ["-p", dir, "-c", confFile, "-e", errorLog]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, proc, 15_000);
  return { url, proc, stop: () => proc.stop() };
}
