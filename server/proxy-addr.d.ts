// proxy-addr (Express's own dependency) has no types of its own: the one call server/index.ts makes.
declare module "proxy-addr" {
  import type { IncomingMessage } from "node:http";
  export default function proxyaddr(req: IncomingMessage, trust: (address: string, hop: number) => boolean): string;
}
