import path from "node:path";
import { interleave } from "../lib/interleave";
import { load, loadBaseline, loadBoundNote } from "../lib/load";
import { startApp, startNginx } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;

/**
 * P4: the media route serving a thumbnail (/media/<imageId>/<key>, signed in: session lookup, access check,
 * file stream) against nginx sending the same file with sendfile. Both on the server core (nginx: one
 * worker), autocannon on the load core. Also checks the answer's caching headers.
 */
export const p4: Metric = {
  id: "P4",
  title: "Thumbnail route req/s, same file, 100k project",
  goal: "≥ 0.10× nginx sendfile, immutable caching headers",
  needs: ["build", "sqlite-100k", "nginx"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const { id, thumbKey } = ds.firstImage;
    const app = await startApp(ctx, ds, 3920);
    try {
      const cookie = await ctx.signIn(app.url, ds);
      const mediaPath = `/media/${id}/${thumbKey.replaceAll("/", "~")}`;
      const res = await fetch(app.url + mediaPath, { headers: { Cookie: cookie }, redirect: "manual" });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 || res.headers.get("content-type") !== "image/webp")
        throw new Error(`GET ${mediaPath} answered ${res.status} ${res.headers.get("content-type")}`);
      const cacheControl = res.headers.get("cache-control") ?? "";
      const immutable = /\bimmutable\b/.test(cacheControl) && /max-age=\d{7,}/.test(cacheControl);
      const nginx = await startNginx(ctx, path.join(ds.dataDir, "objects", thumbKey), 3921, "/thumb.webp", {
        "Cache-Control": cacheControl,
      });
      try {
        const appRun = () => load(ctx, app.url + mediaPath, { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie } });
        const nginxRun = () => load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: SECONDS });
        await load(ctx, app.url + mediaPath, { connections: CONNECTIONS, seconds: 2, headers: { Cookie: cookie } });
        await load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: 2 });
        const rounds = await interleave(ctx.rounds(5), appRun, nginxRun, (r, a, b) =>
          ctx.log(`    round ${r + 1}: app ${a.rps.toFixed(0)} req/s (p99 ${a.p99} ms), nginx ${b.rps.toFixed(0)} req/s`),
        );
        const ratios = rounds.a.map((a, i) => a.rps / rounds.b[i]!.rps);
        const ratio = median(ratios);
        const appRps = median(rounds.a.map((a) => a.rps));
        return {
          figure: ratio,
          unit: "×",
          absolute: { name: "app req/s", value: appRps, unit: "req/s" },
          checks: [
            { name: "ratio", value: ratio, unit: "×", goal: "≥ 0.10", pass: ratio >= 0.1 },
            { name: "immutable", value: immutable, goal: "Cache-Control immutable, long max-age", pass: immutable },
          ],
          subject: { "req/s": appRps, "p50 ms": median(rounds.a.map((a) => a.p50)), "p99 ms": median(rounds.a.map((a) => a.p99)) },
          baseline: loadBaseline(rounds.b),
          rounds: ratios.length,
          perRound: { ratio: ratios, appRps: rounds.a.map((a) => a.rps), nginxRps: rounds.b.map((b) => b.rps) },
          notes: [
            `Thumbnail of ${(body.length / 1024).toFixed(1)} KiB; Cache-Control: ${cacheControl}; ETag ${res.headers.get("etag") ?? "none"}.`,
            loadBoundNote("nginx", median(rounds.b.map((b) => b.loadCpu))),
          ],
        };
      } finally {
        await nginx.stop();
      }
    } finally {
      await app.stop();
    }
  },
};
