/**
 * Range sync against scripted peers (a chain of records and a host whose answers the test
 * writes): a peer whose branch forks below our finalised checkpoint is left out for a while but
 * never penalised or disconnected; a peer serving a block with a bad signature is; a sync whose
 * peer disconnects mid-range finishes from another peer, and a lone peer that fails once is asked
 * again. A peer's finalised checkpoint our head's chain lacks holds validator duties until the
 * sync brings it onto our head's chain; one the peer cannot serve pauses nothing past one pass.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseHex, toHex } from '../../../../src/core/codec/bytes.js';
import { SvcError } from '../../../../src/core/errors.js';
import { type Block, blockHash, buildSignedBlock, decodeBlock, encodeBlock } from '../../../../src/core/types/block.js';
import { BeaconError, type BeaconBlockRecord } from '../../../../src/node/beacon/chain.js';
import { BeaconMetrics } from '../../../../src/node/beacon/metrics.js';
import { decodeRangeRequest, slotOfBlock } from '../../../../src/node/beacon/sync/blocks-by-range.js';
import { RangeSync, type SyncChain, type SyncHost } from '../../../../src/node/beacon/sync/range-sync.js';
import type { StatusMessage } from '../../../../src/node/beacon/sync/status.js';
import { silentLogger } from '../../../../src/util/log.js';
import { filled } from '../../../helpers/assert.js';
import { CHAIN_ID, devnet } from '../../execution/fixture.js';

const { genesis, keys } = devnet();
const slotMs = genesis.config.slot_seconds * 1000;
const GENESIS_ROOT = '0x' + '00'.repeat(32);
const template = buildSignedBlock({ chainId: CHAIN_ID, index: 1, timestampMs: genesis.genesis_time * 1000 + slotMs, parentHash: filled(32, 0), transactions: [], key: keys.validators[0]!.mldsa, validatorIndex: 0, validatorId: parseHex(keys.validators[0]!.address, 'address', 20), vrfSeed: filled(32, 2), randaoReveal: filled(32, 3), stateRoot: filled(32, 4) });

/** A branch of `n` blocks at slots 1..n on `parent` (root hex); `tag` makes branches differ. The signature is the template's: the scripted chain judges blocks, not this test. */
function branch(n: number, parent: string, firstSlot = 1, tag = 0): Uint8Array[] {
  const out: Uint8Array[] = [];
  let parentHash = parseHex(parent, 'parent', 32);
  for (let k = 0; k < n; k++) {
    const slot = firstSlot + k;
    const b: Block = { ...template, header: { ...template.header, index: slot, timestampMs: genesis.genesis_time * 1000 + slot * slotMs, parentHash, randaoReveal: filled(32, tag) } };
    out.push(encodeBlock(b));
    parentHash = blockHash(b.header);
  }
  return out;
}

const rootOf = (ssz: Uint8Array): string => toHex(blockHash(decodeBlock(ssz).header));

/** Our chain: genesis (finalised) and what was imported; `reject` decides a block's fate first. */
function scriptedChain(reject?: (b: Block) => Error | undefined): SyncChain & { records: Map<string, BeaconBlockRecord> } {
  const records = new Map<string, BeaconBlockRecord>();
  const rec = (root: string, parent: string, slot: number): BeaconBlockRecord => ({ root, parent, slot, index: slot, proposer: '0x', proposer_index: 0, state_root: GENESIS_ROOT, transactions: 0, randao: {} as BeaconBlockRecord['randao'] });
  records.set(GENESIS_ROOT, rec(GENESIS_ROOT, GENESIS_ROOT, 0));
  return {
    records,
    genesis,
    head: () => [...records.values()].reduce((a, b) => (b.slot > a.slot ? b : a)),
    record: (r) => records.get(r),
    finalized: () => ({ epoch: 0, root: GENESIS_ROOT }),
    currentSlot: () => 1_000_000,
    onHeadChain: (root) => {
      const head = [...records.values()].reduce((a, b) => (b.slot > a.slot ? b : a));
      for (let r: BeaconBlockRecord | undefined = head; r; r = r.root === GENESIS_ROOT ? undefined : records.get(r.parent)) if (r.root === root) return true;
      return false;
    },
    importBlock: async (block) => {
      const bad = reject?.(block);
      if (bad) throw bad;
      const parent = toHex(block.header.parentHash);
      if (!records.has(parent)) throw new BeaconError('UNKNOWN_PARENT', `unknown parent block ${parent}`);
      const root = toHex(blockHash(block.header));
      records.set(root, rec(root, parent, slotOfBlock(genesis, block)));
    },
  };
}

/** A host whose peers serve `chains[peer]` (blocks by slot), failing a peer's requests once `failAfter[peer]` were answered. */
function scriptedHost(chains: Record<string, Uint8Array[]>, failAfter: Record<string, number> = {}) {
  const calls = { penalised: [] as string[], disconnected: [] as string[], requests: [] as string[] };
  const answered = new Map<string, number>();
  const host: SyncHost = {
    request: async (peer, _protocol, bytes) => {
      calls.requests.push(peer);
      const n = answered.get(peer) ?? 0;
      if (failAfter[peer] !== undefined && n >= failAfter[peer]!) throw new Error('the connection closed');
      answered.set(peer, n + 1);
      const r = decodeRangeRequest(bytes);
      return (chains[peer] ?? []).filter((c) => {
        const slot = slotOfBlock(genesis, decodeBlock(c));
        return slot >= r.startSlot && slot < r.startSlot + r.count;
      });
    },
    penalise: (peer) => void calls.penalised.push(peer),
    disconnect: async (peer) => void calls.disconnected.push(peer),
  };
  return { host, calls };
}

function statusOf(blocks: Uint8Array[], finalizedEpoch = 0): StatusMessage {
  const last = blocks[blocks.length - 1]!;
  return { chainId: new Uint8Array(12), genesisHash: GENESIS_ROOT, headRoot: rootOf(last), headSlot: slotOfBlock(genesis, decodeBlock(last)), finalizedRoot: GENESIS_ROOT, finalizedEpoch };
}

function rangeSync(chain: SyncChain, host: SyncHost): RangeSync {
  const limits = { maxRequestBytes: 16, maxResponseChunks: 64, maxChunkBytes: 1 << 20, timeoutMs: 1000 };
  return new RangeSync({ chain, host, limits, metrics: new BeaconMetrics(), log: silentLogger, restMs: 60_000 });
}

test('a branch that does not attach to our finalised checkpoint is ignored: no penalty, no disconnect, the peer rests', async () => {
  const chain = scriptedChain();
  // The peer's branch hangs off a block we never saw (it forked below a checkpoint we finalised).
  const theirs = branch(6, '0x' + '77'.repeat(32), 3, 1);
  const { host, calls } = scriptedHost({ minority: theirs });
  const sync = rangeSync(chain, host);
  sync.setStatus('minority', statusOf(theirs));
  await sync.trigger();
  assert.equal(calls.penalised, []);
  assert.equal(calls.disconnected, []);
  assert.ok(sync.status('minority'), 'the peer is still known');
  // Resting: a new trigger does not ask it again at once.
  const asked = calls.requests.length;
  await sync.trigger();
  assert.is(calls.requests.length, asked);
});

test('a block with a bad signature is provably invalid: the peer is penalised and disconnected', async () => {
  const theirs = branch(4, GENESIS_ROOT);
  const forged = rootOf(theirs[2]!);
  const chain = scriptedChain((b) => (toHex(blockHash(b.header)) === forged ? new BeaconError('INVALID_BLOCK_SIGNATURE', 'bad block signature') : undefined));
  const { host, calls } = scriptedHost({ liar: theirs });
  const sync = rangeSync(chain, host);
  sync.setStatus('liar', statusOf(theirs));
  await sync.trigger();
  assert.equal(calls.penalised, ['liar']);
  assert.equal(calls.disconnected, ['liar']);
  assert.is(sync.status('liar'), undefined);
  assert.is(chain.records.size, 1 + 2, 'the blocks before the forged one were kept');
});

test('a failed state transition penalises; execution lacking a pruned parent state does not', async () => {
  for (const [err, penalised] of [
    [new SvcError('EXECUTION_REJECTED', 'state root mismatch'), true],
    [new SvcError('INTERNAL', 'store failed'), false],
  ] as const) {
    const theirs = branch(2, GENESIS_ROOT);
    const chain = scriptedChain(() => err);
    const { host, calls } = scriptedHost({ p: theirs });
    const sync = rangeSync(chain, host);
    sync.setStatus('p', statusOf(theirs));
    await sync.trigger();
    assert.is(calls.penalised.length > 0, penalised, err.code);
  }
});

test('a peer disconnecting mid-sync: the rest of the range comes from another peer, nobody penalised', async () => {
  // More than one request's worth (64), so the first peer fails between two batches.
  const main = branch(100, GENESIS_ROOT);
  const chain = scriptedChain();
  const { host, calls } = scriptedHost({ first: main, second: main }, { first: 1 });
  const sync = rangeSync(chain, host);
  sync.setStatus('first', statusOf(main));
  sync.setStatus('second', statusOf(main));
  await sync.trigger();
  assert.is(chain.head().root, rootOf(main[99]!));
  assert.is(chain.records.size, 101);
  assert.ok(calls.requests.includes('second'), 'the second peer was asked');
  assert.is(calls.requests.filter((p) => p === 'first').length, 2, 'the failed peer is not asked again in this sync');
  assert.equal(calls.penalised, []);
  assert.equal(calls.disconnected, []);
});

test('a lone peer whose request fails mid-sync is asked again, and the sync completes', async () => {
  const main = branch(100, GENESIS_ROOT);
  const chain = scriptedChain();
  let failed = false;
  const { host: inner, calls } = scriptedHost({ only: main });
  const host: SyncHost = {
    ...inner,
    request: async (peer, protocol, bytes, limits) => {
      if (calls.requests.length === 1 && !failed) {
        failed = true;
        calls.requests.push(peer);
        throw new Error('stream reset');
      }
      return inner.request(peer, protocol, bytes, limits);
    },
  };
  const sync = rangeSync(chain, host);
  sync.setStatus('only', statusOf(main));
  await sync.trigger();
  assert.ok(failed);
  assert.is(chain.head().root, rootOf(main[99]!));
  assert.equal(calls.penalised, []);
});

test('finality ahead: a checkpoint the peers finalised off our branch pauses duties until range sync puts it on our head chain', async () => {
  const chain = scriptedChain();
  // Our branch (a minority's): six blocks nobody else follows.
  for (const ssz of branch(6, GENESIS_ROOT, 1, 1)) await chain.importBlock(decodeBlock(ssz), ssz);
  const majority = branch(12, GENESIS_ROOT, 1, 2);
  const { host } = scriptedHost({ a: majority });
  const sync = rangeSync(chain, host);
  sync.setStatus('behind', statusOf(majority, 0));
  assert.is(sync.finalityAhead(), undefined, 'a peer finalised no further than us: nothing ahead');
  const finalizedRoot = rootOf(majority[7]!);
  sync.setStatus('a', { ...statusOf(majority), finalizedRoot, finalizedEpoch: 1 });
  assert.equal(sync.finalityAhead(), { peer: 'a', epoch: 1, root: finalizedRoot });
  await sync.trigger();
  assert.is(chain.head().root, rootOf(majority[11]!), 'the majority chain range-synced');
  assert.is(sync.finalityAhead(), undefined, 'its finalised checkpoint is on our head chain now');
});

test('finality ahead: a peer claiming a finality it does not serve pauses duties for one pass only', async () => {
  const chain = scriptedChain();
  const { host, calls } = scriptedHost({ liar: [] });
  const sync = rangeSync(chain, host);
  const claim = { chainId: new Uint8Array(12), genesisHash: GENESIS_ROOT, headRoot: '0x' + '55'.repeat(32), headSlot: 90, finalizedRoot: '0x' + '66'.repeat(32), finalizedEpoch: 9 };
  sync.setStatus('liar', claim);
  assert.is(sync.finalityAhead()?.peer, 'liar');
  await sync.trigger();
  assert.is(sync.finalityAhead(), undefined, 'resting after a pass that brought nothing');
  assert.equal(calls.penalised, [], 'not provably invalid: no penalty');
});

test.run();
