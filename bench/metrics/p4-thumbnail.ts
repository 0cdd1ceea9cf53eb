import path from "node:path";
import { interleave } from "../lib/interleave";
import { load, loadBaseline, loadBoundNote } from "../lib/load";
import { startApp, startNginx, startNginxSite } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;

/**
 * P4: the media route serving a thumbnail (/media/<imageId>/<key>, signed in: session lookup, access check) two
 * ways, against nginx sending the same file with sendfile (the ceiling):
 * - offloaded: MEDIA_OFFLOAD=x-accel behind nginx with the documented site (docs/deploy/nginx.conf): the app checks
 *   access and answers X-Accel-Redirect, nginx sends the file;
 * - the Node path: the app alone, streaming the file itself.
 * Both on the server core (nginx: one worker), autocannon on the load core. Also checks the caching headers.
 */
export const p4: Metric = {
  id: "P4",
  title: "Thumbnail req/s, same file, 100k project: offloaded to nginx, and the Node path",
  goal: "offloaded ≥ 0.8× nginx sendfile; the Node path ≥ 0.10×; immutable caching headers",
  needs: ["build", "sqlite-100k", "nginx"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const { id, thumbKey } = ds.firstImage;
    const objects = path.join(ds.dataDir, "objects");
    const app = await startApp(ctx, ds, 3920);
    const offloading = await startApp(ctx, ds, 3922, { MEDIA_OFFLOAD: "x-accel", TRUST_PROXY: "loopback" });
    const site = await startNginxSite(ctx, 3923, 3922, objects);
    try {
      const cookie = await ctx.signIn(app.url, ds);
      const mediaPath = `/media/${id}/${thumbKey.replaceAll("/", "~")}`;
      const res = await fetch(app.url + mediaPath, { headers: { Cookie: cookie }, redirect: "manual" });
      const body = Buffer.from(await res.arrayBuffer());
      if (res.status !== 200 || res.headers.get("content-type") !== "image/webp")
        throw new Error(`GET ${mediaPath} answered ${res.status} ${res.headers.get("content-type")}`);
      const offloaded = await fetch(site.url + mediaPath, { headers: { Cookie: cookie } });
      const offloadedBody = Buffer.from(await offloaded.arrayBuffer());
      if (offloaded.status !== 200 || !offloadedBody.equals(body))
        throw new Error(`GET ${mediaPath} through nginx answered ${offloaded.status}, ${offloadedBody.length} bytes`);
      const cacheControl = res.headers.get("cache-control") ?? "";
      const immutable = [cacheControl, offloaded.headers.get("cache-control") ?? ""].every(
        (c) => /\bimmutable\b/.test(c) && /max-age=\d{7,}/.test(c),
      );
      const nginx = await startNginx(ctx, path.join(objects, thumbKey), 3921, "/thumb.webp", {
        "Cache-Control": cacheControl,
      });
      try {
        const options = { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie } };
        const appRun = async () => ({
          node: await load(ctx, app.url + mediaPath, options),
          offload: await load(ctx, site.url + mediaPath, options),
        });
        const nginxRun = () => load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: SECONDS });
        await load(ctx, app.url + mediaPath, { ...options, seconds: 2 });
        await load(ctx, site.url + mediaPath, { ...options, seconds: 2 });
        await load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: 2 });
        const rounds = await interleave(ctx.rounds(5), appRun, nginxRun, (r, a, b) =>
          ctx.log(
            `    round ${r + 1}: offloaded ${a.offload.rps.toFixed(0)} req/s (p99 ${a.offload.p99} ms), ` +
              `Node path ${a.node.rps.toFixed(0)} req/s (p99 ${a.node.p99} ms), nginx ${b.rps.toFixed(0)} req/s`,
          ),
        );
        const offloadRatios = rounds.a.map((a, i) => a.offload.rps / rounds.b[i]!.rps);
        const nodeRatios = rounds.a.map((a, i) => a.node.rps / rounds.b[i]!.rps);
        const ratio = median(offloadRatios);
        const nodeRatio = median(nodeRatios);
        const offloadRps = median(rounds.a.map((a) => a.offload.rps));
        const nodeRps = median(rounds.a.map((a) => a.node.rps));
        return {
          figure: ratio,
          unit: "×",
          absolute: { name: "offloaded req/s", value: offloadRps, unit: "req/s" },
          checks: [
            { name: "offloaded ratio", value: ratio, unit: "×", goal: "≥ 0.8", pass: ratio >= 0.8 },
            { name: "Node path ratio", value: nodeRatio, unit: "×", goal: "≥ 0.10", pass: nodeRatio >= 0.1 },
            { name: "immutable", value: immutable, goal: "Cache-Control immutable, long max-age, both ways", pass: immutable },
          ],
          subject: {
            "offloaded req/s": offloadRps,
            "offloaded p99 ms": median(rounds.a.map((a) => a.offload.p99)),
            "Node path req/s": nodeRps,
            "Node path p99 ms": median(rounds.a.map((a) => a.node.p99)),
          },
          baseline: loadBaseline(rounds.b),
          rounds: offloadRatios.length,
          perRound: {
            offloadRatio: offloadRatios,
            nodeRatio: nodeRatios,
            offloadRps: rounds.a.map((a) => a.offload.rps),
            nodeRps: rounds.a.map((a) => a.node.rps),
            nginxRps: rounds.b.map((b) => b.rps),
          },
          notes: [
            `Thumbnail of ${(body.length / 1024).toFixed(1)} KiB; Cache-Control: ${cacheControl}; ETag ${res.headers.get("etag") ?? "none"}.`,
            "Offloaded: nginx and the app share the server core; every request still asks the app (session, access) before nginx sends the file.",
            loadBoundNote("nginx", median(rounds.b.map((b) => b.loadCpu))),
          ],
        };
      } finally {
        await nginx.stop();
      }
    } finally {
      await site.stop();
      await offloading.stop();
      await app.stop();
    }
  },
};
