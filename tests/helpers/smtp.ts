import { SMTPServer } from "smtp-server";

/**
 * A real SMTP server on loopback for a test: every message's raw text is pushed onto `received`. Pass the port of an
 * earlier one to bring it back where the app's mail transport (made once per process) still points.
 */
export async function startSmtp(received: string[], port = 0): Promise<{ port: number; close: () => Promise<void> }> {
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onData(stream, _session, cb) {
      let raw = "";
      stream.on("data", (c: Buffer) => (raw += c.toString()));
      stream.on("end", () => {
        received.push(raw);
        cb();
      });
    },
  });
  await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
  return {
    port: (server.server.address() as { port: number }).port,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
