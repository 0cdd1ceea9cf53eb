import path from "node:path";
import { pathToFileURL } from "node:url";
import { createRequestHandler, type ServerBuild } from "@remix-run/node";
import { buildMinimalRemix } from "../lib/build";
import { pageJavaScript } from "../lib/page-js";
import { startApp } from "../lib/server";
import type { Metric } from "../lib/types";

/**
 * P8a: the gzipped JavaScript the project grid page loads (module scripts, modulepreloads and imports in its
 * HTML) against the same measure for the one-route Remix app in bench/fixtures/minimal-remix, built in the
 * same run with the same Remix and Vite.
 */
export const p8a: Metric = {
  id: "P8a",
  title: "Grid page JavaScript, gzipped",
  goal: "≤ 1.4× a minimal Remix app's",
  needs: ["build", "sqlite-100k"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const app = await startApp(ctx, ds, 3930);
    let html: string;
    try {
      const cookie = await ctx.signIn(app.url, ds);
      const res = await fetch(`${app.url}/client/${ds.projectId}`, { headers: { Cookie: cookie }, redirect: "manual" });
      html = await res.text();
      if (res.status !== 200 || !html.includes(ds.projectName)) throw new Error(`The grid page answered ${res.status}`);
    } finally {
      await app.stop();
    }
    const grid = pageJavaScript(html, path.join(ctx.appDir, "build/client"));

    const minimalDir = await buildMinimalRemix(ctx.root, ctx.cache);
    const build = (await import(pathToFileURL(path.join(minimalDir, "server/index.js")).href)) as ServerBuild;
    const minimalHtml = await (await createRequestHandler(build, "production")(new Request("http://localhost/"))).text();
    const minimal = pageJavaScript(minimalHtml, path.join(minimalDir, "client"));

    const ratio = grid.gzip / minimal.gzip;
    const kib = (n: number) => Math.round((n / 1024) * 10) / 10;
    const largest = [...grid.files].sort((a, b) => b.gzip - a.gzip).slice(0, 4);
    return {
      figure: ratio,
      unit: "×",
      absolute: { name: "grid page JS gzipped", value: kib(grid.gzip), unit: "KiB" },
      checks: [{ name: "ratio", value: ratio, unit: "×", goal: "≤ 1.4", pass: ratio <= 1.4 }],
      subject: { "KiB gzipped": kib(grid.gzip), "KiB raw": kib(grid.bytes), files: grid.files.length },
      baseline: { "KiB gzipped": kib(minimal.gzip), "KiB raw": kib(minimal.bytes), files: minimal.files.length },
      notes: [`Largest grid page files (gzipped): ${largest.map((f) => `${path.basename(f.url)} ${kib(f.gzip)} KiB`).join(", ")}.`],
      details: { grid: grid.files, minimal: minimal.files },
    };
  },
};
