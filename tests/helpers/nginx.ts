import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort } from "./server";

/** Where Debian installs nginx (often off a user's PATH), looked up afresh (the bench may install it). */
export const nginxPath = () => ["/usr/sbin/nginx", "/usr/bin/nginx"].find((p) => existsSync(p));
export const NGINX = nginxPath();
const DEPLOY_CONF = path.resolve("docs/deploy/nginx.conf");
const SIGNED_MEDIA_CONF = path.resolve("docs/deploy/nginx-signed-media.conf");
const TEMP_DIRS = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"];

export interface RunningNginx {
  base: string;
  /** nginx's error log so far. */
  errors(): string;
  stop(): Promise<void>;
}

/**
 * docs/deploy/nginx.conf with only the upstream servers, the listen address and the objects folder swapped for
 * the caller's (the multi-instance test's, the P4 bench's): what the operator copies is what they run.
 */
export function deploySite(opts: { upstreamPorts: number[]; listen: string; objectsDir: string; signedMediaSecret?: string }): string {
  let site = readFileSync(DEPLOY_CONF, "utf8");
  const swap = (pattern: RegExp, by: string) => {
    if (!pattern.test(site)) throw new Error(`docs/deploy/nginx.conf no longer has ${pattern}`);
    site = site.replace(pattern, by);
  };
  const servers = opts.upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join("\n");
  swap(/(?:^ {4}server 127\.0\.0\.1:\d+ [^\n]*\n)+/m, `${servers}\n`);
  swap(/^ {4}listen 8080;$/m, `    listen ${opts.listen};`);
  swap(/^( {8}alias )\/var\/lib\/koala\/objects\/;$/m, `$1${opts.objectsDir.replace(/\/?$/, "/")};`);
  if (opts.signedMediaSecret)
    swap(/^ {4}# include \/etc\/nginx\/koala-signed-media\.conf;$/m, signedMediaSite(opts.objectsDir, opts.signedMediaSecret));
  return site;
}

/** docs/deploy/nginx-signed-media.conf with the secret and the objects folder swapped in, indented for the server block. */
function signedMediaSite(objectsDir: string, secret: string): string {
  let conf = readFileSync(SIGNED_MEDIA_CONF, "utf8");
  for (const [pattern, by] of [
    // The secret file's one line, in place of its include.
    [/^ {4}include \/etc\/nginx\/koala-media-secret\.conf;$/m, `    set $koala_media_secret "${secret}";`],
    [/^( {4}alias )\/var\/lib\/koala\/objects\/;$/m, `$1${objectsDir.replace(/\/?$/, "/")};`],
  ] as const) {
    if (!pattern.test(conf)) throw new Error(`docs/deploy/nginx-signed-media.conf no longer has ${pattern}`);
    conf = conf.replace(pattern, by);
  }
  return conf
    .split("\n")
    .map((line) => (line ? `    ${line}` : line))
    .join("\n");
}

/**
 * nginx's main configuration around a site: one worker, in the foreground, every file under `dir`. Started as
 * root (CI), its worker stays root too: the objects it sends are in the test's private (0700) temp folders.
 */
export function mainConf(dir: string, site: string, errorLog: string): string {
  const user = process.getuid?.() === 0 ? "user root;\n" : "";
  for (const t of TEMP_DIRS) mkdirSync(path.join(dir, t), { recursive: true });
  writeFileSync(path.join(dir, "site.conf"), site);
  const temp = TEMP_DIRS.map((t) => `  ${t}_temp_path ${dir}/${t};`).join("\n");
  return (
    `${user}daemon off;\nworker_processes 1;\npid ${dir}/nginx.pid;\nerror_log ${errorLog} warn;\nevents { worker_connections 4096; }\n` +
    `http {\n  access_log off;\n${temp}\n  include ${dir}/site.conf;\n}\n`
  );
}

/**
 * The documented site configuration, run by a real nginx on loopback in front of the given instances. nginx
 * missing is a failure, not a skip (`.ci/run` installs it).
 */
export async function startNginx(opts: { upstreamPorts: number[]; objectsDir: string; signedMediaSecret?: string }): Promise<RunningNginx> {
  if (!NGINX) throw new Error("nginx is not installed: apt-get install nginx-light (.ci/run installs it)");
  const port = await freePort();
  const dir = mkdtempSync(path.join(tmpdir(), "koala-nginx-"));
  const errorLog = path.join(dir, "error.log");
  const site = deploySite({ ...opts, listen: `127.0.0.1:${port}` });
  writeFileSync(path.join(dir, "nginx.conf"), mainConf(dir, site, errorLog));
  const child = spawn(NGINX, ["-p", dir, "-c", path.join(dir, "nginx.conf"), "-e", errorLog], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const base = `http://127.0.0.1:${port}`;
  const errors = () => stderr + (existsSync(errorLog) ? readFileSync(errorLog, "utf8") : "");
  const deadline = Date.now() + 15_000;
  const listening = () =>
    fetch(`${base}/healthz`).then(
      () => true,
      () => false,
    );
  while (!(await listening())) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`nginx did not start:\n${errors()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    base,
    errors,
    async stop() {
      if (child.exitCode === null) {
        child.kill("SIGTERM");
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
