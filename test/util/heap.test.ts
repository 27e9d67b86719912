/** Heap and IndexedHeap against a sorted reference, including removals and re-keyed items. */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Heap, IndexedHeap } from '../../src/util/heap.js';

const heap = suite('heap');

interface Item {
  key: number;
  id: number;
}
const before = (a: Item, b: Item): boolean => a.key < b.key || (a.key === b.key && a.id < b.id);

heap('Heap pops in order', () => {
  const h = new Heap<number>((a, b) => a < b);
  const xs = Array.from({ length: 200 }, (_, i) => (i * 7919) % 211);
  for (const x of xs) h.push(x);
  const out: number[] = [];
  for (let x = h.pop(); x !== undefined; x = h.pop()) out.push(x);
  assert.equal(out, [...xs].sort((a, b) => a - b));
});

heap('IndexedHeap: peek is the first item after random pushes, deletes and replacements', () => {
  let seed = 12345;
  const r = (n: number): number => {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    return (seed >>> 8) % n;
  };
  const h = new IndexedHeap<Item>(before);
  const held: Item[] = [];
  let id = 0;
  for (let step = 0; step < 3000; step++) {
    const op = r(4);
    if (op === 0 && held.length > 0) {
      const [x] = held.splice(r(held.length), 1);
      assert.ok(h.delete(x!));
      assert.not.ok(h.delete(x!), 'a second delete finds nothing');
    } else if (op === 1 && held.length > 0) {
      const i = r(held.length);
      const next = { key: r(50), id: id++ };
      h.replace(held[i]!, next);
      held[i] = next;
    } else {
      const x = { key: r(50), id: id++ };
      h.push(x);
      held.push(x);
    }
    assert.is(h.size, held.length);
    const first = [...held].sort((a, b) => (before(a, b) ? -1 : before(b, a) ? 1 : 0))[0];
    assert.is(h.peek(), first);
  }
  assert.ok(held.length > 0);
  assert.throws(() => h.push(held[0]!), /already held/);
});

heap.run();
