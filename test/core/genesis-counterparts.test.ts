/**
 * Bridge counterparts in a genesis document (docs/bridge.md "Genesis counterparts"): strict
 * parsing with a machine code per rule, the genesis hash covering the set (not its order), and the
 * genesis state root holding their registration words.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex, utf8 } from '../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS, WEI_PER_TOKEN } from '../../src/core/constants.js';
import { GenesisError } from '../../src/core/errors.js';
import { type Genesis, canonicalJson, genesisHash, parseGenesis } from '../../src/core/genesis/genesis.js';
import { genesisStateRoot } from '../../src/core/state/genesis-root.js';
import { genesisBridgeStorage } from '../../src/core/bridge/genesis.js';
import { committedSlot, counterpartSlot, ledgerSlot, wordAmount } from '../../src/core/bridge/types.js';
import { parseCounterpart } from '../../src/core/bridge/verify.js';
import { buildGenesis } from '../../src/genesis/build.js';
import { DEV_MNEMONIC } from '../../src/wallet/derivation.js';
import { testChain } from '../helpers/bridge.js';
import { bytesIs, bytesNot, expectError } from '../helpers/assert.js';

const TOKEN = WEI_PER_TOKEN;
const RESERVE = 1_000n * TOKEN;
const X = testChain('svc-bridge-x', 5, 1);
const Y = testChain('svc-bridge-y', 6, 1);
const plan = { validators: 1, accounts: 0, preset: 'devnet' as const, chainId: 'svc-self', networkId: 9, genesisTime: 1_700_000_000, mnemonic: DEV_MNEMONIC, timing: { randaoChainLength: 16 } };
const BASE = buildGenesis({ ...plan, bridgeReserve: RESERVE }).genesis;

const entry = (c: { genesis: Genesis; hash: Uint8Array }, allowance: bigint) => ({ genesis_hash: toHex(c.hash), allowance: allowance.toString(), genesis: c.genesis });
/** A mutable copy of BASE listing `entries`. */
const withCounterparts = (entries: unknown[], base: Genesis = BASE): any => ({ ...JSON.parse(JSON.stringify(base)), bridge_counterparts: JSON.parse(JSON.stringify(entries)) });

function refused(doc: unknown, code: string, message: RegExp): void {
  const err = expectError(() => parseGenesis(doc), GenesisError, { code, status: 400 });
  assert.match(err.message, message);
}

test('a valid list parses sorted by genesis hash; the hash covers the set, not its order; an empty list is no list', () => {
  const g = parseGenesis(withCounterparts([entry(X, 10n * TOKEN), entry(Y, 20n * TOKEN)]));
  assert.equal(g.bridge_counterparts!.map((c) => c.genesis_hash), [toHex(X.hash), toHex(Y.hash)].sort());
  assert.equal(g.bridge_counterparts!.find((c) => c.genesis_hash === toHex(X.hash))!.genesis, X.genesis);
  const reversed = parseGenesis(withCounterparts([entry(Y, 20n * TOKEN), entry(X, 10n * TOKEN)]));
  bytesIs(genesisHash(reversed), genesisHash(g));
  // The list, each allowance and each document are covered: change any and the chain is another.
  bytesNot(genesisHash(g), genesisHash(BASE));
  bytesNot(genesisHash(parseGenesis(withCounterparts([entry(X, 10n * TOKEN)]))), genesisHash(g));
  bytesNot(genesisHash(parseGenesis(withCounterparts([entry(X, 11n * TOKEN), entry(Y, 20n * TOKEN)]))), genesisHash(g));
  const empty = parseGenesis(withCounterparts([]));
  assert.is(empty.bridge_counterparts, undefined);
  bytesIs(genesisHash(empty), genesisHash(BASE));
  // The encoding: the canonical JSON carries the list under bridge_counterparts, each entry's keys sorted.
  assert.ok(canonicalJson(g).includes(`"bridge_counterparts":[{"allowance":"${g.bridge_counterparts![0]!.allowance}","genesis":{`));
  // What the builder writes is what parses.
  const built = buildGenesis({ ...plan, bridgeReserve: RESERVE, bridgeCounterparts: [{ genesis: Y.genesis, allowance: 20n * TOKEN }, { genesis: X.genesis, allowance: 10n * TOKEN }] }).genesis;
  bytesIs(genesisHash(built), genesisHash(g));
});

test('a counterpart whose own genesis lists counterparts nests, and registering it hashes the same', () => {
  const inner = parseGenesis(withCounterparts([entry(Y, TOKEN)], buildGenesis({ ...plan, chainId: 'svc-inner', bridgeReserve: TOKEN }).genesis));
  const g = parseGenesis(withCounterparts([{ genesis_hash: toHex(genesisHash(inner)), allowance: '0', genesis: inner }]));
  assert.equal(g.bridge_counterparts![0]!.genesis, inner);
  // A register operation carrying that document names the same chain.
  bytesIs(parseCounterpart(utf8(canonicalJson(inner)), genesisHash(g)).hash, genesisHash(inner));
});

test('malformed entries are GENESIS_COUNTERPART_INVALID naming the field', () => {
  refused({ ...withCounterparts([]), bridge_counterparts: {} }, 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts must be an array/);
  refused(withCounterparts(['x']), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\].*expected an object/);
  refused(withCounterparts([{ ...entry(X, TOKEN), extra: 1 }]), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.extra: unknown field/);
  refused(withCounterparts([{ ...entry(X, TOKEN), allowance: '-1' }]), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.allowance/);
  refused(withCounterparts([{ ...entry(X, TOKEN), allowance: 5 }]), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.allowance/);
  refused(withCounterparts([{ ...entry(X, TOKEN), genesis_hash: '0x12' }]), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.genesis_hash/);
  refused(withCounterparts([{ ...entry(X, TOKEN), genesis_hash: toHex(Y.hash) }]), 'GENESIS_COUNTERPART_INVALID', /genesis_hash 0x[0-9a-f]{64} is not the hash of its genesis document/);
  const { genesis: _omitted, ...noDoc } = entry(X, TOKEN);
  refused(withCounterparts([noDoc]), 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.genesis: /);
  // Malformed keys of the counterpart's validators: a short key, a key its address does not derive from.
  const short = withCounterparts([entry(X, TOKEN)]);
  short.bridge_counterparts[0].genesis.validators[0].public_key = '0x' + 'ab'.repeat(32);
  refused(short, 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.genesis: .*validators\[0\]\.public_key/);
  const swapped = withCounterparts([entry(X, TOKEN)]);
  swapped.bridge_counterparts[0].genesis.validators[0].public_key = Y.genesis.validators[0]!.public_key;
  refused(swapped, 'GENESIS_COUNTERPART_INVALID', /genesis\.bridge_counterparts\[0\]\.genesis: .*address does not derive from its public key/);
});

test('duplicates, this chain itself and allowances beyond the reserve are refused with their own codes', () => {
  refused(withCounterparts([entry(X, TOKEN), entry(X, TOKEN)]), 'GENESIS_COUNTERPART_DUPLICATE', /lists the genesis hash 0x[0-9a-f]{64} twice/);
  // Another chain under the same chain id (another key set): BIDs and `bridge send --chain` could not tell them apart.
  const X2 = testChain('svc-bridge-x', 7, 1);
  refused(withCounterparts([entry(X, TOKEN), entry(X2, TOKEN)]), 'GENESIS_COUNTERPART_DUPLICATE', /lists the chain id svc-bridge-x twice/);
  // This chain's own genesis (as it would be without the list), or any chain under its chain id.
  refused(withCounterparts([{ genesis_hash: toHex(genesisHash(BASE)), allowance: '0', genesis: BASE }]), 'GENESIS_COUNTERPART_SELF', /is chain svc-self, the chain this genesis starts/);
  const twin = testChain('svc-self', 8, 1);
  refused(withCounterparts([entry(twin, 0n)]), 'GENESIS_COUNTERPART_SELF', /svc-self/);
  refused(withCounterparts([entry(X, RESERVE), entry(Y, 1n)]), 'GENESIS_COUNTERPART_RESERVE', new RegExp(`allocate ${RESERVE + 1n} wei, beyond the bridge reserve of ${RESERVE} wei`));
  const noReserve = buildGenesis(plan).genesis;
  refused(withCounterparts([entry(X, 1n)], noReserve), 'GENESIS_COUNTERPART_RESERVE', /beyond the bridge reserve of 0 wei/);
  // Exactly the reserve, or nothing without one, is fine.
  parseGenesis(withCounterparts([entry(X, RESERVE - 5n), entry(Y, 5n)]));
  parseGenesis(withCounterparts([entry(X, 0n)], noReserve));
});

test('genesis bridge storage: registered, ledger and allowance per counterpart, their sum committed; the state root holds it, even without a reserve', () => {
  const g = parseGenesis(withCounterparts([entry(X, 10n * TOKEN), entry(Y, 0n)]));
  const words = new Map(genesisBridgeStorage(g).map(([slot, word]) => [toHex(slot), word]));
  assert.is(words.size, 5);
  assert.is(wordAmount(words.get(toHex(counterpartSlot(X.hash)))!), 1n);
  assert.is(wordAmount(words.get(toHex(counterpartSlot(Y.hash)))!), 1n);
  assert.is(wordAmount(words.get(toHex(ledgerSlot(X.hash)))!), 10n * TOKEN);
  assert.is(words.get(toHex(ledgerSlot(Y.hash))), undefined);
  assert.is(wordAmount(words.get(toHex(committedSlot()))!), 10n * TOKEN);
  assert.equal(genesisBridgeStorage(BASE), []);
  bytesNot(genesisStateRoot(g), genesisStateRoot(BASE));
  const noReserve = buildGenesis(plan).genesis;
  assert.is(noReserve.alloc.some((a) => a.address === BRIDGE_ADDRESS), false);
  bytesNot(genesisStateRoot(parseGenesis(withCounterparts([entry(X, 0n)], noReserve))), genesisStateRoot(noReserve));
});

test.run();
