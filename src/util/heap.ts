/** A binary heap ordered by `before(a, b)` (true when a should come out first). */
export class Heap<T> {
  /** `items`, when given, must already be heap-ordered under `before` (a snapshot of another heap). */
  constructor(
    private readonly before: (a: T, b: T) => boolean,
    private readonly items: T[] = [],
  ) {}

  get size(): number {
    return this.items.length;
  }

  /** Adds an item in O(log n). */
  push(item: T): void {
    const a = this.items;
    a.push(item);
    let i = a.length - 1;
    // Sift with a hole: one move per level instead of a swap.
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(item, a[p]!)) break;
      a[i] = a[p]!;
      i = p;
    }
    a[i] = item;
  }

  /** Removes and returns the first item in O(log n). */
  pop(): T | undefined {
    const a = this.items;
    if (a.length === 0) return undefined;
    const top = a[0]!;
    const last = a.pop()!;
    if (a.length > 0) {
      let i = 0;
      const n = a.length;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= n) break;
        const r = l + 1;
        const c = r < n && this.before(a[r]!, a[l]!) ? r : l;
        if (!this.before(a[c]!, last)) break;
        a[i] = a[c]!;
        i = c;
      }
      a[i] = last;
    }
    return top;
  }
}

/**
 * A binary heap that also removes or re-positions any item it holds in O(log n): each item's
 * slot is tracked, so an item whose key changed, or that left, is fixed up where it sits.
 * An item may be held once.
 */
export class IndexedHeap<T> {
  private readonly items: T[] = [];
  private readonly slot = new Map<T, number>();

  constructor(private readonly before: (a: T, b: T) => boolean) {}

  get size(): number {
    return this.items.length;
  }

  /** The first item, without removing it. */
  peek(): T | undefined {
    return this.items[0];
  }

  /** A plain heap holding the same items in the same order, to pop from without changing this one (O(n) copy). */
  snapshot(): Heap<T> {
    return new Heap(this.before, this.items.slice());
  }

  /** Whether `item` is held. */
  has(item: T): boolean {
    return this.slot.has(item);
  }

  /** Adds an item in O(log n). */
  push(item: T): void {
    if (this.slot.has(item)) throw new Error('IndexedHeap: item already held');
    this.items.push(item);
    this.slot.set(item, this.items.length - 1);
    this.up(this.items.length - 1);
  }

  /** Removes `item` in O(log n); false if it was not held. */
  delete(item: T): boolean {
    const i = this.slot.get(item);
    if (i === undefined) return false;
    this.slot.delete(item);
    const last = this.items.pop()!;
    if (i < this.items.length) {
      this.items[i] = last;
      this.slot.set(last, i);
      this.fix(i);
    }
    return true;
  }

  /** Puts `next` where `prev` was (or pushes it if `prev` is not held) in O(log n). */
  replace(prev: T, next: T): void {
    const i = this.slot.get(prev);
    if (i === undefined) return this.push(next);
    this.slot.delete(prev);
    this.items[i] = next;
    this.slot.set(next, i);
    this.fix(i);
  }

  private fix(i: number): void {
    if (i > 0 && this.before(this.items[i]!, this.items[(i - 1) >> 1]!)) this.up(i);
    else this.down(i);
  }

  private swap(i: number, j: number): void {
    const a = this.items;
    const x = a[i]!;
    const y = a[j]!;
    a[i] = y;
    a[j] = x;
    this.slot.set(y, i);
    this.slot.set(x, j);
  }

  private up(i: number): void {
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(this.items[i]!, this.items[p]!)) break;
      this.swap(i, p);
      i = p;
    }
  }

  private down(i: number): void {
    const a = this.items;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < a.length && this.before(a[l]!, a[m]!)) m = l;
      if (r < a.length && this.before(a[r]!, a[m]!)) m = r;
      if (m === i) return;
      this.swap(i, m);
      i = m;
    }
  }
}
