import { ByteBoundedCache } from "./bounded-cache";

/**
 * Rendered pages kept in memory: the share links' public pages (shared-page-cache.server.ts) and the memoized
 * renders of signed-in pages (render-memo.server.ts). A page is kept split around its CSP nonce, so that every
 * answer carries its own request's nonce.
 */

/** A rendered page, split around its CSP nonce. */
export interface Entry {
  /** What the page was rendered from; an entry of another version is stale. */
  version: string;
  parts: Buffer[];
  headers: Record<string, string>;
  /** What the entry costs the cache: its parts and its key. */
  bytes: number;
}

/**
 * A page's HTML as kept: the pieces between its nonces, views of one buffer of its own (not a slab of Node's shared
 * pool, which a small piece would keep alive unaccounted), and what that buffer costs.
 */
export function piecesOf(html: string, nonce: string): { parts: Buffer[]; bytes: number } {
  const whole = Buffer.allocUnsafeSlow(Buffer.byteLength(html));
  whole.write(html);
  const cut = Buffer.from(nonce);
  const parts: Buffer[] = [];
  let from = 0;
  for (let at = whole.indexOf(cut); at !== -1; at = whole.indexOf(cut, from)) {
    parts.push(whole.subarray(from, at));
    from = at + cut.length;
  }
  parts.push(whole.subarray(from));
  return { parts, bytes: whole.byteLength };
}

/** The kept pieces with this request's nonce between them (no copy of the page per answer), and their length. */
export function withNonce(parts: Buffer[], nonce: string): { body: Buffer[]; length: number } {
  const between = Buffer.from(nonce);
  return {
    body: parts.flatMap((part, i) => (i ? [between, part] : [part])),
    length: parts.reduce((n, p) => n + p.length, 0) + between.length * (parts.length - 1),
  };
}

/** Pages kept least recently used first out, bounded by entries and by bytes; each entry checked against its version. */
export class PageCache {
  private readonly cache: ByteBoundedCache<Entry>;
  constructor(maxEntries: number, maxBytes: number) {
    this.cache = new ByteBoundedCache(maxEntries, maxBytes);
  }

  /** The entry for this version; an entry of another version is dropped (what it was rendered from changed). */
  get(key: string, version: string): Entry | null {
    const entry = this.cache.get(key);
    if (entry && entry.version !== version) {
      this.cache.delete(key);
      return null;
    }
    return entry;
  }

  set(key: string, entry: Entry) {
    this.cache.set(key, entry);
  }

  get size() {
    return this.cache.size;
  }
}
