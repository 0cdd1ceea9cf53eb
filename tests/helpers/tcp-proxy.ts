import { connect, createServer, type Server, type Socket } from "node:net";
import { freePort } from "./server";

/**
 * A TCP forwarder on loopback to `targetPort` (PostgreSQL), which a test closes and opens again as the database
 * "going away" and "coming back": closed, it refuses new connections and has cut the open ones.
 */
export async function startTcpProxy(targetPort: number) {
  const port = await freePort();
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  // Opened again on the same port: should another test have taken it meanwhile, the error says so.
  const open = () =>
    new Promise<void>((resolve, reject) => {
      server = createServer((client) => {
        const upstream = connect(targetPort, "127.0.0.1");
        for (const s of [client, upstream]) {
          sockets.add(s);
          s.on("error", () => {});
          s.on("close", () => sockets.delete(s));
        }
        client.pipe(upstream).pipe(client);
      });
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    });
  // The open connections are cut first: the server's close waits for every one of them to end.
  const close = async () => {
    const closed = new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
    for (const s of sockets) s.destroy();
    await closed;
  };
  await open();
  return { port, open, close };
}
