/** Request/response frames: varint length prefixes, chunk boundaries anywhere, and every way a frame can be bad. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { encodeFrame, FrameError, FrameReader } from '../../../src/node/p2p/framing.js';

/** A byte source delivering `bytes` in pieces of `piece` bytes. */
async function* pieces(bytes: Uint8Array, piece: number): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < bytes.length; i += piece) yield bytes.slice(i, i + piece);
}

const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let o = 0;
  for (const p of parts) {
    out.set(p, o);
    o += p.length;
  }
  return out;
};

async function fault(bytes: Uint8Array, max: number): Promise<string> {
  try {
    const r = new FrameReader(pieces(bytes, 3));
    while ((await r.next(max)) !== null);
  } catch (err) {
    assert.instance(err, FrameError);
    return (err as FrameError).fault;
  }
  return 'none';
}

test('lengths across varint boundaries round-trip, whatever the chunking', async () => {
  const sizes = [0, 1, 127, 128, 300, 16_383, 16_384, 70_000];
  const frames = sizes.map((n) => new Uint8Array(n).map((_, i) => (i * 7 + n) & 0xff));
  const wire = concat(...frames.map(encodeFrame));
  assert.equal([...encodeFrame(new Uint8Array(128)).subarray(0, 2)], [0x80, 0x01]);
  for (const piece of [1, 5, 4096, wire.length]) {
    const r = new FrameReader(pieces(wire, piece));
    for (const f of frames) assert.equal(await r.next(100_000), f);
    assert.is(await r.next(100_000), null);
    assert.ok(await r.atEnd());
  }
});

test('bad frames are refused by reason, before their body is read', async () => {
  assert.is(await fault(encodeFrame(new Uint8Array(11)), 10), 'oversize');
  assert.is(await fault(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0xff, 0x01]), 1 << 30), 'malformed_length');
  assert.is(await fault(new Uint8Array([0x85, 0x00]), 100), 'malformed_length', 'non-minimal varint');
  assert.is(await fault(new Uint8Array([0x85]), 100), 'truncated', 'ends inside the length');
  assert.is(await fault(new Uint8Array([10, 1, 2, 3]), 100), 'truncated', 'ends inside the body');
  // An oversized length is refused even though its body never arrives.
  assert.is(await fault(new Uint8Array([0x80, 0x80, 0x80, 0x01]), 1000), 'oversize');
});

test('atEnd tells trailing bytes from a clean end', async () => {
  const r = new FrameReader(pieces(concat(encodeFrame(new Uint8Array([1])), new Uint8Array([9])), 1));
  assert.equal(await r.next(10), new Uint8Array([1]));
  assert.not.ok(await r.atEnd());
});

test.run();
