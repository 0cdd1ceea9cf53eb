import dns, { type LookupAddress } from "node:dns";
import http from "node:http";
import https from "node:https";
import net, { type LookupFunction } from "node:net";

/**
 * Fetching a URL a user typed (a project's WSC manifest and the images it lists) without letting them reach the
 * server's own network (SSRF): only http(s), no credentials in the URL, every address the host name resolves to
 * checked against private/loopback/link-local/… ranges, and the connection then made to those checked addresses
 * (a pinned `lookup`), so a DNS answer that changes between the check and the connect (rebinding) cannot slip
 * through. Redirects are followed by hand, each hop checked from scratch. Size and time are bounded.
 */

/** A refused fetch. The message is short, user-facing and never carries the URL's credentials or query string. */
export class FetchRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FetchRefused";
  }
}

export interface SafeFetchOptions {
  /**
   * URL host names (exactly as URL.hostname gives them, lower case, IPv6 with or without brackets) that may resolve to
   * private/loopback/link-local addresses, on any port; or one origin's `host:port` (`[v6]:port`), that port only.
   * Default [].
   */
  allowedPrivateHosts?: readonly string[];
  /** A larger body is refused: at once when Content-Length says so, else the moment the count passes it. */
  maxBytes: number;
  /** The whole request, redirects and body included. Default 15000. */
  timeoutMs?: number;
  /** Default 3; each hop re-checked (scheme, credentials, address). */
  maxRedirects?: number;
  /** Cancels the fetch; it then rejects with the signal's reason. */
  signal?: AbortSignal;
}

export interface SafeFetchResult {
  body: Buffer;
  contentType: string | null;
  finalUrl: string;
}

// Not globally reachable IPv4 (IANA special-purpose registry).
const blockedV4 = new net.BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network", 0.0.0.0
  ["10.0.0.0", 8], // private
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8], // loopback
  ["169.254.0.0", 16], // link-local (cloud metadata 169.254.169.254)
  ["172.16.0.0", 12], // private
  ["192.0.0.0", 24], // IETF protocol assignments
  ["192.0.2.0", 24], // documentation
  ["192.88.99.0", 24], // 6to4 relay anycast (deprecated)
  ["192.168.0.0", 16], // private
  ["198.18.0.0", 15], // benchmarking
  ["198.51.100.0", 24], // documentation
  ["203.0.113.0", 24], // documentation
  ["224.0.0.0", 4], // multicast
  ["240.0.0.0", 4], // reserved, broadcast 255.255.255.255
] as const)
  blockedV4.addSubnet(network, prefix, "ipv4");

// IPv6: everything outside global unicast 2000::/3 (::, ::1, fc00::/7, fe80::/10, ff00::/8, …), plus the special
// ranges inside it. IPv4-mapped and NAT64 addresses never reach this list: their IPv4 address is checked instead.
const blockedV6 = new net.BlockList();
for (const [network, prefix] of [
  ["::", 3], // 0000::–1fff:: (unspecified, loopback, IPv4-compatible, 64:ff9b:1::/48, 100::/64 discard)
  ["4000::", 2], // 4000::–7fff::
  ["8000::", 1], // 8000::–ffff:: (unique-local, link-local, site-local, multicast)
  ["2001::", 23], // IETF protocol assignments: Teredo 2001::/32, benchmarking 2001:2::/48, ORCHID
  ["2001:db8::", 32], // documentation
  ["2002::", 16], // 6to4 (tunnels to any IPv4 address)
  ["3fff::", 20], // documentation
] as const)
  blockedV6.addSubnet(network, prefix, "ipv6");

/** True for addresses that must not be reached unless the host is allowed (see the lists above); also for non-addresses. */
export function isBlockedAddress(address: string): boolean {
  const version = net.isIP(address);
  if (version === 4) return blockedV4.check(address, "ipv4");
  if (version !== 6 || address.includes("%")) return true; // not an address, or a scoped (zone) one
  const w = ipv6Words(address);
  const mapped = w[0] === 0 && w[1] === 0 && w[2] === 0 && w[3] === 0 && w[4] === 0 && w[5] === 0xffff; // ::ffff:a.b.c.d
  const nat64 = w[0] === 0x64 && w[1] === 0xff9b && w[2] === 0 && w[3] === 0 && w[4] === 0 && w[5] === 0; // 64:ff9b::a.b.c.d
  if (mapped || nat64) return blockedV4.check(`${w[6]! >> 8}.${w[6]! & 255}.${w[7]! >> 8}.${w[7]! & 255}`, "ipv4");
  return blockedV6.check(address, "ipv6");
}

/** The eight 16-bit words of a valid IPv6 address (net.isIPv6 already said so). */
function ipv6Words(address: string): number[] {
  let text = address;
  const tail = text.slice(text.lastIndexOf(":") + 1);
  if (tail.includes(".")) {
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number);
    text = `${text.slice(0, text.length - tail.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const zeros = Array<string>(8 - left.length - right.length).fill("0");
  return [...left, ...(rest === undefined ? [] : zeros), ...right].map((word) => parseInt(word, 16));
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const HEADERS = { "User-Agent": "Koala-WSC-Import/1", Accept: "*/*", "Accept-Encoding": "identity" };

/** GETs `url` under the rules above; throws FetchRefused (or, when `signal` aborts, its reason). */
export async function safeFetch(url: string, opts: SafeFetchOptions): Promise<SafeFetchResult> {
  const { maxBytes, timeoutMs = 15_000, maxRedirects = 3 } = opts;
  const allowed = (opts.allowedPrivateHosts ?? []).map(allowance);
  opts.signal?.throwIfAborted();
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new FetchRefused(`Refused: no answer within ${+(timeoutMs / 1000).toFixed(1)} s`)),
    timeoutMs,
  );
  const signal = opts.signal ? AbortSignal.any([opts.signal, deadline.signal]) : deadline.signal;
  try {
    let target = checkedUrl(url);
    for (let hop = 0; ; hop++) {
      const addresses = await untilAborted(checkedAddresses(target, allowed), signal);
      const answer = await fetchOnce(target, addresses, maxBytes, signal);
      if (answer.body) return { body: answer.body, contentType: answer.contentType, finalUrl: target.href };
      if (!REDIRECTS.has(answer.status) || !answer.location) throw new FetchRefused(`Refused: the server answered ${answer.status}`);
      if (hop >= maxRedirects) throw new FetchRefused("Refused: too many redirects");
      target = checkedUrl(answer.location, target);
    }
  } finally {
    clearTimeout(timer);
  }
}

function checkedUrl(href: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(href, base);
  } catch {
    throw new FetchRefused("Refused: not a valid address");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new FetchRefused("Refused: only http and https addresses are allowed");
  if (url.username || url.password) throw new FetchRefused("Refused: addresses with a user name or password are not allowed");
  return url;
}

/** URL.hostname without an IPv6 literal's brackets. */
const bareHost = (url: URL) => url.hostname.replace(/^\[(.*)\]$/, "$1");

interface Allowance {
  host: string;
  /** Only this port (an origin's allowance), or any. */
  port: string | null;
}

/** An allowed entry: `name`, `name:port`, `[v6]`, `[v6]:port`, or a bare IPv6 address (any port). */
function allowance(entry: string): Allowance {
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(entry);
  if (v6) return { host: v6[1]!, port: v6[2] ?? null };
  if (net.isIPv6(entry)) return { host: entry, port: null };
  const withPort = /^(.+):(\d+)$/.exec(entry);
  return withPort ? { host: withPort[1]!, port: withPort[2]! } : { host: entry, port: null };
}

const portOf = (url: URL) => url.port || (url.protocol === "https:" ? "443" : "80");
const isAllowed = (url: URL, allowed: readonly Allowance[]) =>
  allowed.some((a) => a.host === bareHost(url) && (a.port === null || a.port === portOf(url)));

/** Every address the host resolves to (an IP literal: itself), refused if any is blocked and the host is not allowed. */
async function checkedAddresses(url: URL, allowed: readonly Allowance[]): Promise<LookupAddress[]> {
  const host = bareHost(url);
  const family = net.isIP(host);
  const addresses = family
    ? [{ address: host, family }]
    : await dns.promises.lookup(host, { all: true }).catch(() => [] as LookupAddress[]);
  if (!addresses.length) throw new FetchRefused(`Refused: could not find ${host}`);
  const blocked = addresses.find((a) => isBlockedAddress(a.address));
  if (blocked && !isAllowed(url, allowed))
    // The address itself is not named: a report must not map the inside of the network for whoever reads it.
    throw new FetchRefused(`Refused: ${host} is a private address`);
  return addresses;
}

/** A `lookup` for http.request that answers with the already-checked addresses and never asks DNS again. */
const pinnedLookup =
  (addresses: LookupAddress[]): LookupFunction =>
  (_hostname, options, callback) =>
    options.all ? callback(null, addresses) : callback(null, addresses[0]!.address, addresses[0]!.family);

function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

interface Answer {
  status: number;
  location?: string;
  contentType: string | null;
  /** Only for a 2xx answer. */
  body?: Buffer;
}

/** One GET to the checked addresses. A non-2xx answer comes back without its body (the connection is dropped). */
function fetchOnce(url: URL, addresses: LookupAddress[], maxBytes: number, signal: AbortSignal): Promise<Answer> {
  const host = bareHost(url);
  const tooLarge = () => new FetchRefused(`Refused: the file is larger than ${size(maxBytes)}`);
  return new Promise<Answer>((resolve, reject) => {
    const request = (url.protocol === "https:" ? https : http).request({
      host,
      port: url.port || undefined,
      path: url.pathname + url.search,
      headers: { ...HEADERS, Host: url.host },
      lookup: pinnedLookup(addresses),
      servername: net.isIP(host) ? undefined : host, // TLS SNI and certificate check against the name, not the address
      agent: false, // a fresh connection: nothing pooled from another hop
    });
    const onAbort = () => fail(signal.reason);
    /** Drops the connection (the rest of the body is never read). */
    const close = () => {
      signal.removeEventListener("abort", onAbort);
      request.destroy();
    };
    const fail = (error: Error) => {
      close();
      reject(error); // a no-op once resolved
    };
    const lost = (message: string) => () => fail(signal.aborted ? signal.reason : new FetchRefused(message));
    signal.addEventListener("abort", onAbort, { once: true });
    request.on("error", lost(`Refused: could not connect to ${host}`));
    request.on("response", (response) => {
      const status = response.statusCode ?? 0;
      const contentType = response.headers["content-type"] ?? null;
      if (status < 200 || status > 299) {
        resolve({ status, location: response.headers.location, contentType });
        return close();
      }
      if (Number(response.headers["content-length"]) > maxBytes) return fail(tooLarge());
      const chunks: Buffer[] = [];
      let total = 0;
      response.on("data", (chunk: Buffer) => {
        total += chunk.length;
        if (total > maxBytes) return fail(tooLarge());
        chunks.push(chunk);
      });
      response.on("end", () => {
        signal.removeEventListener("abort", onAbort);
        resolve({ status, contentType, body: Buffer.concat(chunks, total) });
      });
      const cutShort = lost(`Refused: ${host} closed the connection early`);
      response.on("error", cutShort);
      response.on("close", () => response.complete || cutShort());
    });
    request.end();
  });
}

const size = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${+(bytes / 1024 / 1024).toFixed(1)} MB` : bytes >= 1024 ? `${+(bytes / 1024).toFixed(1)} KB` : `${bytes} bytes`;
