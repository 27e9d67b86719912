/**
 * A least-recently-used cache bounded by the bytes of its values rather than their count: one
 * full block's data is a thousand times an empty block's, so a count bound is no memory bound.
 */

/** Size and occupancy of a cache, for metrics. */
export interface CacheStats {
  bytes: number;
  entries: number;
  maxBytes: number;
}

export class ByteCache<V> {
  private readonly map = new Map<string, { value: V; size: number }>();
  private total = 0;

  /** `sizeOf` estimates a value's resident bytes; a value larger than `maxBytes` is not kept. */
  constructor(
    readonly maxBytes: number,
    private readonly sizeOf: (value: V) => number,
  ) {}

  /** The value under `key`, marking it recently used. */
  get(key: string): V | undefined {
    const hit = this.map.get(key);
    if (!hit) return undefined;
    this.map.delete(key);
    this.map.set(key, hit);
    return hit.value;
  }

  /** Stores `value`, evicting the least recently used entries until the bound holds. */
  set(key: string, value: V): void {
    this.delete(key);
    const size = this.sizeOf(value);
    if (size > this.maxBytes) return;
    this.map.set(key, { value, size });
    this.total += size;
    // Only over the bound: an iterator per insertion was garbage on admission's path.
    if (this.total <= this.maxBytes) return;
    for (const [k, e] of this.map) {
      if (this.total <= this.maxBytes) break;
      this.map.delete(k);
      this.total -= e.size;
    }
  }

  /** Removes `key` if present. */
  delete(key: string): void {
    const e = this.map.get(key);
    if (!e) return;
    this.map.delete(key);
    this.total -= e.size;
  }

  /** Removes every entry. */
  clear(): void {
    this.map.clear();
    this.total = 0;
  }

  /** Current bytes, entries and bound. */
  stats(): CacheStats {
    return { bytes: this.total, entries: this.map.size, maxBytes: this.maxBytes };
  }
}
