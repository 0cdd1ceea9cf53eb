import { readFileSync } from "node:fs";
import path from "node:path";
import SQLite from "better-sqlite3";
import type { Dataset } from "../lib/datasets";
import { interleave } from "../lib/interleave";
import { assertPortFree, run, start, waitForHttp } from "../lib/proc";
import { startApp, type Server } from "../lib/server";
import { median } from "../lib/stats";
import type { Context, Metric } from "../lib/types";

const DOWNLOADS = 2;
const MB = 1e6;

interface Download {
  headersMs: number;
  firstByteMs: number;
  seconds: number;
  bytes: number;
}
interface Side {
  mbPerSecond: number;
  firstByteMs: number;
  clientCpu: number;
  bytes: number;
}

/** The originals of the dataset's images on disk, in id order (what the ZIP holds and the baseline sends). */
function originals(ds: Dataset): string[] {
  const db = new SQLite(path.join(ds.dataDir, "koala.sqlite"), { readonly: true });
  try {
    const rows = db.prepare("select storage_key from images where project_id = ? order by id").all(ds.projectId) as {
      storage_key: string;
    }[];
    return rows.map((r) => path.join(ds.dataDir, "objects", r.storage_key));
  } finally {
    db.close();
  }
}

/** Select all on the project grid, as its form posts it: the signed selection cookie (`name=value`). */
async function selectAll(url: string, projectId: number, cookie: string): Promise<string> {
  const res = await fetch(`${url}/client/${projectId}`, {
    method: "POST",
    headers: { Cookie: cookie, "Content-Type": "application/x-www-form-urlencoded" },
    body: "intent=select-all",
    redirect: "manual",
  });
  await res.arrayBuffer();
  const selection = res.headers
    .getSetCookie()
    .map((c) => c.split(";")[0]!)
    .find((c) => /^(__Host-)?koala_selection=./.test(c));
  if (res.status < 300 || res.status >= 400 || !selection) throw new Error(`Select all answered ${res.status} without a selection cookie`);
  return selection;
}

/** DOWNLOADS whole downloads one after another by workers/download-client.mjs on the load core. */
async function downloads(ctx: Context, spec: { url: string; method?: string; headers?: Record<string, string>; body?: string }) {
  const out = await run(ctx.cores.load, process.execPath, [
    path.join(ctx.root, "bench/workers/download-client.mjs"),
    JSON.stringify({ ...spec, count: DOWNLOADS }),
  ]);
  const { downloads, clientCpu } = JSON.parse(out.trim().split("\n").pop()!) as { downloads: Download[]; clientCpu: number };
  const bytes = downloads.reduce((s, d) => s + d.bytes, 0);
  const seconds = downloads.reduce((s, d) => s + d.seconds, 0);
  return {
    mbPerSecond: bytes / MB / seconds,
    firstByteMs: median(downloads.map((d) => d.firstByteMs)),
    clientCpu,
    bytes: bytes / downloads.length,
  };
}

/** Resident memory of a live process (VmRSS), in MB. */
const rssMB = (pid: number) => (Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0) * 1024) / MB;

/** node:http sending the files one after another (workers/concat-server.mjs), pinned to the server core. */
async function startConcat(ctx: Context, files: string[], port: number): Promise<Server> {
  await assertPortFree(port);
  const proc = start(ctx.cores.server, process.execPath, [path.join(ctx.root, "bench/workers/concat-server.mjs"), String(port), ...files]);
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/healthz`, proc);
  return { url, proc, stop: () => proc.stop() };
}

/**
 * P7: Download of a 100-image selection as one ZIP through the production server, signed in, over HTTP (the
 * grid's Select all, then POST /client/<id>/bulk/zip, the whole body read), against node:http reading the same
 * files from disk one after another onto the socket. MB/s per round (DOWNLOADS downloads per side), the app's
 * time to the first body byte, and the app server's memory growth: its peak VmRSS (sampled every 20 ms through
 * the warm-up and the rounds) minus its VmRSS before the first download.
 */
export const p7: Metric = {
  id: "P7",
  title: "ZIP download of 100 images of 5 MB, signed in, over HTTP",
  goal: "≥ 0.8× the MB/s of sending the files, first byte ≤ 50 ms, server memory growth ≤ 64 MB",
  needs: ["build", "sqlite-100x5mb"],
  async run(ctx) {
    const ds = await ctx.dataset("sqlite-100x5mb");
    const files = originals(ds);
    const app = await startApp(ctx, ds, 3925);
    try {
      const session = await ctx.signIn(app.url, ds);
      const selection = await selectAll(app.url, ds.projectId, session);
      const zip = {
        url: `${app.url}/client/${ds.projectId}/bulk/zip`,
        method: "POST",
        headers: { Cookie: `${session}; ${selection}`, "Content-Type": "application/x-www-form-urlencoded" },
        body: "",
      };
      const concat = await startConcat(ctx, files, 3926);
      const before = rssMB(app.proc.pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssMB(app.proc.pid))), 20);
      try {
        const warm = await downloads(ctx, zip);
        const baseWarm = await downloads(ctx, { url: `${concat.url}/` });
        const rounds = await interleave<Side>(
          ctx.rounds(5),
          () => downloads(ctx, zip),
          () => downloads(ctx, { url: `${concat.url}/` }),
          (r, a, b) =>
            ctx.log(
              `    round ${r + 1}: app ${a.mbPerSecond.toFixed(0)} MB/s (first byte ${a.firstByteMs.toFixed(1)} ms), files ${b.mbPerSecond.toFixed(0)} MB/s; server RSS peak +${(peak - before).toFixed(0)} MB`,
            ),
        );
        const after = rssMB(app.proc.pid);
        const ratios = rounds.a.map((a, i) => a.mbPerSecond / rounds.b[i]!.mbPerSecond);
        const ratio = median(ratios);
        const firstByte = median(rounds.a.map((a) => a.firstByteMs));
        const growth = peak - before;
        const appMBs = median(rounds.a.map((a) => a.mbPerSecond));
        return {
          figure: ratio,
          unit: "×",
          absolute: { name: "app MB/s", value: appMBs, unit: "MB/s" },
          checks: [
            { name: "ratio", value: ratio, unit: "×", goal: "≥ 0.8", pass: ratio >= 0.8, rounds: "ratio" },
            { name: "first byte", value: firstByte, unit: "ms", goal: "≤ 50", pass: firstByte <= 50, rounds: "firstByteMs" },
            { name: "memory growth", value: growth, unit: "MB", goal: "≤ 64", pass: growth <= 64 },
          ],
          subject: {
            "MB/s": appMBs,
            "first byte ms": firstByte,
            "RSS before MB": before,
            "RSS peak MB": peak,
            "RSS after MB": after,
            "client CPU": median(rounds.a.map((a) => a.clientCpu)),
          },
          baseline: {
            "MB/s": median(rounds.b.map((b) => b.mbPerSecond)),
            "first byte ms": median(rounds.b.map((b) => b.firstByteMs)),
            "client CPU": median(rounds.b.map((b) => b.clientCpu)),
          },
          rounds: ratios.length,
          perRound: {
            ratio: ratios,
            appMBs: rounds.a.map((a) => a.mbPerSecond),
            filesMBs: rounds.b.map((b) => b.mbPerSecond),
            firstByteMs: rounds.a.map((a) => a.firstByteMs),
          },
          notes: [
            `${files.length} originals, ${(baseWarm.bytes / MB).toFixed(1)} MB together; the ZIP is ${(warm.bytes / MB).toFixed(1)} MB ` +
              `(stored entries and images.csv). ${DOWNLOADS} downloads per side per round; MB = 10^6 bytes.`,
            `Server RSS ${before.toFixed(0)} MB before the first download, peak ${peak.toFixed(0)} MB, ${after.toFixed(0)} MB after the last ` +
              `(growth after − before: ${(after - before).toFixed(0)} MB). First byte: from sending the request to the first body byte.`,
            `The download client used ${Math.round(median(rounds.b.map((b) => b.clientCpu)) * 100)}% of its core during the baseline's downloads` +
              (median(rounds.b.map((b) => b.clientCpu)) >= 0.9
                ? ": the baseline could go faster than measured, so the ratio is an upper bound."
                : "."),
          ],
        };
      } finally {
        clearInterval(sampler);
        await concat.stop();
      }
    } finally {
      await app.stop();
    }
  },
};
