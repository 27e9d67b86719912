/** ByteCache: a least-recently-used cache bounded by the bytes of its values. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ByteCache } from '../../src/util/byte-cache.js';

const sized = (max: number) => new ByteCache<string>(max, (v) => v.length);

test('evicts least recently used entries until the byte bound holds, whatever their count', () => {
  const c = sized(10);
  c.set('a', 'xxxx');
  c.set('b', 'xxxx');
  assert.equal(c.stats(), { bytes: 8, entries: 2, maxBytes: 10 });
  assert.is(c.get('a'), 'xxxx', 'a is now the most recently used');
  c.set('c', 'xxxx');
  assert.is(c.get('b'), undefined, 'b was least recently used');
  assert.equal([c.get('a'), c.get('c')], ['xxxx', 'xxxx']);
  assert.equal(c.stats(), { bytes: 8, entries: 2, maxBytes: 10 });
  // One large value displaces several small ones.
  c.set('d', 'xxxxxxxxx');
  assert.equal(c.stats(), { bytes: 9, entries: 1, maxBytes: 10 });
});

test('a value larger than the bound is not kept; replacing a key recounts its bytes', () => {
  const c = sized(10);
  c.set('a', 'xx');
  c.set('big', 'x'.repeat(11));
  assert.is(c.get('big'), undefined);
  assert.equal(c.stats(), { bytes: 2, entries: 1, maxBytes: 10 });
  c.set('a', 'xxxxx');
  assert.equal(c.stats(), { bytes: 5, entries: 1, maxBytes: 10 });
  c.delete('a');
  assert.equal(c.stats(), { bytes: 0, entries: 0, maxBytes: 10 });
});

test.run();
