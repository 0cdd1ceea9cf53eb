// P6-s3's object store: s3rver (the S3 stand-in of the tests) with one bucket, on loopback, until SIGTERM.
// Usage: node bench/workers/s3-server.mjs <directory> <port> <bucket>
import S3rver from "s3rver";

const [directory, port, bucket] = process.argv.slice(2);
const server = new S3rver({
  port: Number(port),
  address: "127.0.0.1",
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
});
await server.run();
process.on("SIGTERM", () => void server.close().then(() => process.exit(0)));
