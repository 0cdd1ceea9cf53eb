import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { appEnv } from "../lib/datasets";
import { interleave } from "../lib/interleave";
import { load, pageThroughput } from "../lib/load";
import { run } from "../lib/proc";
import { startApp, startStatic } from "../lib/server";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;

/**
 * P3: the public page of a share link (a board of 100 images of the 100k project, no cookies, no JavaScript needed)
 * under 50 connections, against node:http answering the very same bytes from memory. The app runs as in production:
 * the link is resolved, the view counted and the page taken from the shared-page cache on every request after the
 * first. Both servers on the server core, autocannon on the load core; 5 rounds of 5 s each, alternating.
 */
export const p3: Metric = {
  id: "P3",
  title: "Shared board page (HTML, no session, 100 cards), req/s at 50 connections",
  goal: "≥ 0.5× node:http serving the same bytes, p99 ≤ 50 ms",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    // The board (made once, kept in the dataset) and a fresh link to it, through the app's own models.
    const out = await run(null, path.join(ctx.root, "node_modules/.bin/tsx"), [path.join(ctx.root, "bench/workers/share-board.ts")], {
      cwd: ctx.root,
      env: { ...process.env, ...appEnv(ds), BENCH_PROJECT_ID: String(ds.projectId), BENCH_EMAIL: ds.email },
    });
    const { path: pagePath } = JSON.parse(out.trim().split("\n").pop()!) as { path: string };
    const app = await startApp(ctx, ds, 3912);
    try {
      const res = await fetch(app.url + pagePath, { redirect: "manual" });
      const html = Buffer.from(await res.arrayBuffer());
      const text = html.toString("utf8");
      const cards = text.split('data-image-id="').length - 1;
      const total = /grid-count[^>]*>\d+<!-- --> \/ <!-- -->(\d+)/.exec(text)?.[1] ?? "?";
      if (res.status !== 200 || !html.includes("P3 shared board"))
        throw new Error(`GET ${pagePath.split(":")[0]}:… answered ${res.status} without the shared board`);
      const file = path.join(ctx.cache, "tmp", "p3-page.html");
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, html);
      const base = await startStatic(ctx, file, 3913, res.headers.get("content-type") ?? "text/html; charset=utf-8");
      try {
        const appRun = () => load(ctx, app.url + pagePath, { connections: CONNECTIONS, seconds: SECONDS });
        const baseRun = () => load(ctx, `${base.url}/`, { connections: CONNECTIONS, seconds: SECONDS });
        // Warm-up: JIT, the page cache, connection set-up.
        await load(ctx, app.url + pagePath, { connections: CONNECTIONS, seconds: 2 });
        await load(ctx, `${base.url}/`, { connections: CONNECTIONS, seconds: 2 });
        const rounds = await interleave(ctx.rounds(5), appRun, baseRun, (r, a, b) =>
          ctx.log(`    round ${r + 1}: app ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms), node:http ${b.rps.toFixed(0)} req/s`),
        );
        const requests = rounds.a.reduce((n, a) => n + a.requests, 0);
        return pageThroughput(rounds, { ratio: 0.5, p99: 50 }, [
          `Page of ${(html.length / 1024).toFixed(1)} KiB with the first ${cards} cards of the board's ${total} (uncompressed; the load generator sends no Accept-Encoding and no cookies), ${CONNECTIONS} connections, ${SECONDS} s per run.`,
          `Every request resolves the link and counts a view (${requests.toLocaleString("en")} measured requests).`,
        ]);
      } finally {
        await base.stop();
      }
    } finally {
      await app.stop();
    }
  },
};
