import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import S3rver from "s3rver";
import { S3Storage } from "~/services/storage-s3.server";

/**
 * A real S3-compatible server (s3rver) on loopback, with one bucket, for the S3 driver's tests.
 * It checks request signatures like S3 does (credentials S3RVER / S3RVER).
 */
export async function startS3(): Promise<{ endpoint: string; bucket: string; env: Record<string, string>; storage: () => S3Storage; stop(): Promise<void> }> {
  const directory = mkdtempSync(path.join(tmpdir(), "koala-s3-"));
  const bucket = "koala-test";
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = (await server.run()) as { port: number };
  const endpoint = `http://127.0.0.1:${port}`;
  const env = { S3_BUCKET: bucket, S3_ENDPOINT: endpoint, S3_REGION: "us-east-1", S3_ACCESS_KEY_ID: "S3RVER", S3_SECRET_ACCESS_KEY: "S3RVER" };
  const storages: S3Storage[] = [];
  return {
    endpoint,
    bucket,
    env,
    storage() {
      const s = new S3Storage({ bucket, region: "us-east-1", endpoint, accessKeyId: "S3RVER", secretAccessKey: "S3RVER", forcePathStyle: true });
      storages.push(s);
      return s;
    },
    async stop() {
      for (const s of storages) s.destroy();
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
