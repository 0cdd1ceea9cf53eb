import { randomBytes } from "node:crypto";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { load, loadBaseline, loadBoundNote } from "../lib/load";
import { startApp, startNginx, startNginxSite } from "../lib/server";
import { median } from "../lib/stats";
import type { Metric } from "../lib/types";

const CONNECTIONS = 50;
const SECONDS = 5;

/**
 * P4: a signed-in person's thumbnail (/media/<imageId>/<key>) three ways, against nginx sending the same file with
 * sendfile (the ceiling):
 * - offloaded: MEDIA_OFFLOAD=signed behind nginx with the documented site (docs/deploy/nginx.conf and
 *   nginx-signed-media.conf): the URL as the grid's JSON gave it, signed by the app when it checked access; nginx
 *   checks the signature and sends the file without asking the app;
 * - x-accel: the same URL unsigned through the same nginx: the app checks the session and access on every request
 *   and answers X-Accel-Redirect, nginx sends the file (what MEDIA_OFFLOAD=x-accel does for every thumbnail);
 * - the Node path: the app alone, streaming the file itself.
 * Both on the server core (nginx: one worker), autocannon on the load core. Also checks the caching headers.
 */
export const p4: Metric = {
  id: "P4",
  title: "Thumbnail req/s, same file, 100k project: offloaded to nginx (signed URL; x-accel beside it), and the Node path",
  goal: "offloaded ≥ 0.8× nginx sendfile; the Node path ≥ 0.10×; immutable caching headers",
  needs: ["build", "sqlite-100k", "nginx"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100k");
    const { id, thumbKey } = ds.firstImage;
    const objects = path.join(ds.dataDir, "objects");
    const app = await startApp(ctx, ds, 3920);
    const secret = randomBytes(24).toString("base64url");
    const offloading = await startApp(ctx, ds, 3922, { MEDIA_OFFLOAD: "signed", MEDIA_URL_SECRET: secret, TRUST_PROXY: "loopback" });
    const site = await startNginxSite(ctx, 3923, 3922, objects, secret);
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
      const grid = await fetch(`${site.url}/api/grid?project=${ds.projectId}&limit=1`, { headers: { Cookie: cookie } });
      const first = ((await grid.json()) as { cards: { id: number; thumbUrl: string }[] }).cards[0];
      const signedPath = first?.thumbUrl ?? "";
      if (first?.id !== id || !signedPath.startsWith(`${mediaPath}?e=`))
        throw new Error(`/api/grid gave no signed URL for ${mediaPath}: ${signedPath}`);
      const signed = await fetch(site.url + signedPath);
      const signedBody = Buffer.from(await signed.arrayBuffer());
      if (signed.status !== 200 || !signedBody.equals(body) || signed.headers.get("content-type") !== "image/webp")
        throw new Error(
          `GET ${signedPath} through nginx answered ${signed.status} ${signed.headers.get("content-type")}, ${signedBody.length} bytes`,
        );
      const cacheControl = res.headers.get("cache-control") ?? "";
      const immutable = [cacheControl, offloaded.headers.get("cache-control") ?? "", signed.headers.get("cache-control") ?? ""].every(
        (c) => /\bimmutable\b/.test(c) && /max-age=\d{7,}/.test(c),
      );
      const nginx = await startNginx(ctx, path.join(objects, thumbKey), 3921, "/thumb.webp", {
        "Cache-Control": cacheControl,
      });
      try {
        const options = { connections: CONNECTIONS, seconds: SECONDS, headers: { Cookie: cookie } };
        const appRun = async () => ({
          node: await load(ctx, app.url + mediaPath, options),
          accel: await load(ctx, site.url + mediaPath, options),
          // No cookie: a signature that lapsed would be a redirect to sign-in, which stops the metric.
          offload: await load(ctx, site.url + signedPath, { connections: CONNECTIONS, seconds: SECONDS }),
        });
        const nginxRun = () => load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: SECONDS });
        await load(ctx, app.url + mediaPath, { ...options, seconds: 2 });
        await load(ctx, site.url + mediaPath, { ...options, seconds: 2 });
        await load(ctx, site.url + signedPath, { connections: CONNECTIONS, seconds: 2 });
        await load(ctx, `${nginx.url}/thumb.webp`, { connections: CONNECTIONS, seconds: 2 });
        const rounds = await interleave(ctx.rounds(5), appRun, nginxRun, (r, a, b) =>
          ctx.log(
            `    round ${r + 1}: offloaded (signed) ${a.offload.rps.toFixed(0)} req/s (p99 ${a.offload.p99} ms), ` +
              `x-accel ${a.accel.rps.toFixed(0)} req/s (p99 ${a.accel.p99} ms), ` +
              `Node path ${a.node.rps.toFixed(0)} req/s (p99 ${a.node.p99} ms), nginx ${b.rps.toFixed(0)} req/s`,
          ),
        );
        const offloadRatios = rounds.a.map((a, i) => a.offload.rps / rounds.b[i]!.rps);
        const nodeRatios = rounds.a.map((a, i) => a.node.rps / rounds.b[i]!.rps);
        const accelRatios = rounds.a.map((a, i) => a.accel.rps / rounds.b[i]!.rps);
        const ratio = median(offloadRatios);
        const nodeRatio = median(nodeRatios);
        const offloadRps = median(rounds.a.map((a) => a.offload.rps));
        const nodeRps = median(rounds.a.map((a) => a.node.rps));
        return {
          figure: ratio,
          unit: "×",
          absolute: { name: "offloaded req/s", value: offloadRps, unit: "req/s" },
          checks: [
            { name: "offloaded ratio", value: ratio, unit: "×", goal: "≥ 0.8", pass: ratio >= 0.8, rounds: "offloadRatio" },
            { name: "Node path ratio", value: nodeRatio, unit: "×", goal: "≥ 0.10", pass: nodeRatio >= 0.1, rounds: "nodeRatio" },
            { name: "immutable", value: immutable, goal: "Cache-Control immutable, long max-age, both ways", pass: immutable },
          ],
          subject: {
            "offloaded (signed) req/s": offloadRps,
            "offloaded (signed) p99 ms": median(rounds.a.map((a) => a.offload.p99)),
            "x-accel req/s": median(rounds.a.map((a) => a.accel.rps)),
            "x-accel ratio": median(accelRatios),
            "x-accel p99 ms": median(rounds.a.map((a) => a.accel.p99)),
            "Node path req/s": nodeRps,
            "Node path p99 ms": median(rounds.a.map((a) => a.node.p99)),
          },
          baseline: loadBaseline(rounds.b),
          rounds: offloadRatios.length,
          perRound: {
            offloadRatio: offloadRatios,
            nodeRatio: nodeRatios,
            accelRatio: accelRatios,
            offloadRps: rounds.a.map((a) => a.offload.rps),
            nodeRps: rounds.a.map((a) => a.node.rps),
            nginxRps: rounds.b.map((b) => b.rps),
          },
          notes: [
            `Thumbnail of ${(body.length / 1024).toFixed(1)} KiB; Cache-Control: ${cacheControl}; ETag ${res.headers.get("etag") ?? "none"}.`,
            "Offloaded (signed): the app checked access when it made the URL (the grid's JSON); nginx checks the signature and expiry per request. " +
              "x-accel: nginx and the app share the server core; every request asks the app (session, access) before nginx sends the file.",
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
