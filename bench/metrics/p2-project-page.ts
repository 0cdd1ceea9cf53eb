import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { load, pageThroughput } from "../lib/load";
import { startApp, startStatic } from "../lib/server";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;

/**
 * P2: the project page (/client/<id> of the 100k project, signed in, server-rendered HTML) under 50 connections,
 * against node:http answering the very same bytes from memory. Both servers on the server core, autocannon on the
 * load core; 5 rounds of 5 s each, alternating. Repeat views: after the first, the page comes from its memoized
 * render (docs/decisions/0018). P2-first: the same with every request's URL new (`?first=<n>`), so every one renders.
 */
function projectPage(firstViews: boolean): Metric {
  // Issue 31: repeat views at 0.04×, first views at 0.03× (both were 0.02×).
  const goal = { ratio: firstViews ? 0.03 : 0.04, p99: 250 };
  return {
    id: firstViews ? "P2-first" : "P2",
    title: firstViews
      ? "Project page, first views (every request a page not rendered before), req/s at 50 connections, 100k project"
      : "Project page (HTML, signed in), req/s at 50 connections, 100k project",
    goal: `≥ ${goal.ratio}× node:http serving the same bytes, p99 ≤ ${goal.p99} ms`,
    needs: ["build", "sqlite-100k"],
    async run(ctx) {
      const ds = await ctx.dataset("sqlite-100k");
      const app = await startApp(ctx, ds, 3910);
      try {
        const cookie = await ctx.signIn(app.url, ds);
        const pagePath = `/client/${ds.projectId}`;
        const res = await fetch(app.url + pagePath, { headers: { Cookie: cookie }, redirect: "manual" });
        const html = Buffer.from(await res.arrayBuffer());
        if (res.status !== 200 || !html.includes(ds.projectName))
          throw new Error(`GET ${pagePath} answered ${res.status} without the project's grid`);
        const file = path.join(ctx.cache, "tmp", "p2-page.html");
        mkdirSync(path.dirname(file), { recursive: true });
        writeFileSync(file, html);
        const base = await startStatic(ctx, file, 3911, res.headers.get("content-type") ?? "text/html; charset=utf-8");
        try {
          const appLoad = (seconds: number) =>
            load(ctx, app.url + pagePath, {
              connections: CONNECTIONS,
              seconds,
              headers: { Cookie: cookie },
              ...(firstViews ? { uniqueParam: "first" } : {}),
            });
          const baseRun = () => load(ctx, `${base.url}/`, { connections: CONNECTIONS, seconds: SECONDS });
          // Warm-up: JIT, caches, connection set-up. The app's is 5 s: after 2 s (~800 answers) V8 was still
          // optimising its path and the first round ran ~15% slower than the rest (as P5's loader did, bench/README.md).
          await appLoad(5);
          await load(ctx, `${base.url}/`, { connections: CONNECTIONS, seconds: 2 });
          const rounds = await interleave(
            ctx.rounds(5),
            () => appLoad(SECONDS),
            baseRun,
            (r, a, b) =>
              ctx.log(`    round ${r + 1}: app ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms), node:http ${b.rps.toFixed(0)} req/s`),
          );
          return pageThroughput(rounds, goal, [
            firstViews
              ? "Every request's URL carries a number no other request had (a parameter the page ignores), so each is rendered: the cost of a first view, and of every view with RENDER_CACHE_MB=0."
              : "Repeat views of one page, as a person going back and forth between the grid and its images makes them: from the third view on, the page comes from its memoized render (the loaders run every time; docs/decisions/0018). P2-first measures first views.",
            `Page of ${(html.length / 1024).toFixed(1)} KiB (uncompressed; the load generator sends no Accept-Encoding), ${CONNECTIONS} connections, ${SECONDS} s per run.`,
          ]);
        } finally {
          await base.stop();
        }
      } finally {
        await app.stop();
      }
    },
  };
}

export const p2 = projectPage(false);
export const p2First = projectPage(true);
