/**
 * Sets `key` in a Map used as a small cache: a key set again becomes the newest, and when the map holds `max`
 * entries the oldest goes. The one way Koala's in-process caches stay bounded.
 */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number) {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}

/** Least recently used first out, bounded by entries and by bytes: the one byte-bounded cache (pages, media). */
export class ByteBoundedCache<V extends { bytes: number }> {
  private entries = new Map<string, V>();
  private bytes = 0;
  constructor(
    private readonly maxEntries: number,
    private readonly maxBytes: number,
  ) {}

  /** The entry, now the most recently used. */
  get(key: string): V | null {
    const entry = this.entries.get(key);
    if (!entry) return null;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  delete(key: string) {
    const entry = this.entries.get(key);
    if (!entry) return;
    this.entries.delete(key);
    this.bytes -= entry.bytes;
  }

  /** Keeps `entry` (not when it alone exceeds the bound), dropping the least recently used past either bound. */
  set(key: string, entry: V) {
    this.delete(key);
    if (entry.bytes > this.maxBytes) return;
    this.entries.set(key, entry);
    this.bytes += entry.bytes;
    for (const oldest of this.entries.keys()) {
      if (this.entries.size <= this.maxEntries && this.bytes <= this.maxBytes) break;
      this.delete(oldest);
    }
  }

  get size() {
    return { entries: this.entries.size, bytes: this.bytes };
  }
}
