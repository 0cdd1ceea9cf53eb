import { mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { interleave } from "../lib/interleave";
import { assertPortFree, start, waitForHttp } from "../lib/proc";
import type { Context, Metric } from "../lib/types";
import { appRound, CONCURRENCY, ingestFiles, ingestResult, sharpRound, type Side } from "./p6-ingest";

const S3_PORT = 3955;
const BUCKET = "koala-bench";

/**
 * A side's round against its own s3rver (a fresh, empty bucket: the app's content-addressed originals of one round
 * would otherwise be found already stored in the next). s3rver runs on the load core, as a store the app does not own.
 */
async function withBucket(ctx: Context, side: (s3: { endpoint: string }) => Promise<Side>): Promise<Side> {
  const directory = mkdtempSync(path.join(ctx.cache, "ingest-s3-"));
  await assertPortFree(S3_PORT);
  const endpoint = `http://127.0.0.1:${S3_PORT}`;
  const server = start(ctx.cores.load, process.execPath, [
    path.join(ctx.root, "bench/workers/s3-server.mjs"),
    directory,
    String(S3_PORT),
    BUCKET,
  ]);
  try {
    await waitForHttp(`${endpoint}/`, server);
    return await side({ endpoint });
  } finally {
    await server.stop();
    rmSync(directory, { recursive: true, force: true });
  }
}

/**
 * P6-s3: P6's ingest with the S3 driver — the browser's PUT to a presigned URL of the bucket, registration reading
 * the upload back, checking it, putting the derivatives and copying the original inside the bucket — against the bare
 * sharp script that also sends each original to the bucket (lib-storage's Upload, as the driver streams). The store
 * is s3rver, one per round; images/s and the server's peak RSS against the script's.
 */
export const p6S3: Metric = {
  id: "P6-s3",
  title: "Ingest of 12-megapixel JPEGs to S3 (s3rver)",
  goal: "≥ 0.85× bare sharp + PUT's images/s, ≤ 1.5× its peak RSS",
  needs: ["build"],
  async run(ctx) {
    const { files, megabytes } = await ingestFiles(ctx);
    const rounds = await interleave(
      ctx.rounds(3),
      () =>
        withBucket(ctx, ({ endpoint }) =>
          appRound(ctx, files, {
            S3_BUCKET: BUCKET,
            S3_ENDPOINT: endpoint,
            S3_REGION: "us-east-1",
            S3_ACCESS_KEY_ID: "S3RVER",
            S3_SECRET_ACCESS_KEY: "S3RVER",
          }),
        ),
      () => withBucket(ctx, ({ endpoint }) => sharpRound(ctx, files, { INGEST_S3_ENDPOINT: endpoint, INGEST_S3_BUCKET: BUCKET })),
      (r, a, b) =>
        ctx.log(
          `    round ${r + 1}: app ${a.imagesPerSecond.toFixed(2)} img/s, ${a.peakRssMiB.toFixed(0)} MiB; sharp + PUT ${b.imagesPerSecond.toFixed(2)} img/s, ${b.peakRssMiB.toFixed(0)} MiB`,
        ),
    );
    return ingestResult(rounds, [
      `${files.length} JPEGs of 4000×3000, ${megabytes.toFixed(1)} MB each on average; ${CONCURRENCY} at a time on both sides.`,
      "s3rver (one per round, on the load core) stands in for S3; files under one 8 MiB part go as one PutObject.",
    ]);
  },
};
