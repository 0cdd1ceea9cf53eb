/**
 * Sets `key` in a Map used as a small cache: a key set again becomes the newest, and when the map holds `max`
 * entries the oldest goes. The one way Koala's in-process caches stay bounded.
 */
export function remember<K, V>(map: Map<K, V>, key: K, value: V, max: number) {
  map.delete(key);
  if (map.size >= max) map.delete(map.keys().next().value!);
  map.set(key, value);
}
