/** Genesis documents: strict parsing, cross-checks, canonical hash, slot/epoch arithmetic, fork schedule. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { GWEI, WEI_PER_TOKEN } from '../../src/core/constants.js';
import { toHex, utf8 } from '../../src/core/codec/bytes.js';
import { addressFromPublicKey } from '../../src/core/crypto/address.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { keygenFromSeed } from '../../src/core/crypto/mldsa.js';
import { randaoCommitment } from '../../src/core/crypto/randao.js';
import { GenesisError, MalformedError } from '../../src/core/errors.js';
import {
  type Genesis,
  PRESETS,
  canonicalJson,
  epochOfSlot,
  forkSchedule,
  genesisHash,
  parseGenesis,
  slotAt,
  slotStartMs,
} from '../../src/core/genesis/genesis.js';
import { bytesIs, bytesNot, expectError, filled } from '../helpers/assert.js';

const GENESIS_TIME = 1_700_000_000;
const seeds = [filled(32, 1), filled(32, 2)];
const keys = seeds.map(keygenFromSeed);
const MIN_STAKE = (32n * WEI_PER_TOKEN).toString();
const FAUCET = toHex(filled(20, 0xfa));

const VALID: Genesis = {
  chain_id: 'svc-devnet',
  network_id: 31337,
  preset: 'devnet',
  genesis_time: GENESIS_TIME,
  config: {
    ...PRESETS.devnet,
    faucet: { address: FAUCET, amount: (10n * WEI_PER_TOKEN).toString(), cooldown_seconds: 60 },
  },
  forks: [
    { name: 'genesis', epoch: 0, version: '0x00000001' },
    { name: 'quantum', epoch: 10, version: '0x00000002' },
    { name: 'later', epoch: 20, version: '0x00000003' },
  ],
  alloc: [
    { address: FAUCET, balance: (1_000_000n * WEI_PER_TOKEN).toString() },
    { address: toHex(filled(20, 0x01)), balance: '0' },
  ],
  validators: keys.map((k, i) => ({
    index: i,
    address: toHex(addressFromPublicKey(k.publicKey)),
    public_key: toHex(k.publicKey),
    stake: MIN_STAKE,
    randao_commitment: toHex(randaoCommitment(seeds[i]!, PRESETS.devnet.randao_chain_length)),
  })),
};

/** A deep, mutable copy of the valid document. */
function doc(): any {
  return JSON.parse(JSON.stringify(VALID));
}

/** The same value with object keys in reverse order at every level. */
function reversedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(reversedKeys);
  if (value !== null && typeof value === 'object') {
    const o = value as Record<string, unknown>;
    return Object.fromEntries(Object.keys(o).reverse().map((k) => [k, reversedKeys(o[k])]));
  }
  return value;
}

function expectGenesisError(mutate: (g: any) => void, message: string): void {
  const g = doc();
  mutate(g);
  expectError(() => parseGenesis(g), GenesisError, { code: 'INVALID_GENESIS', status: 400, message });
}

function expectMalformed(mutate: (g: any) => void, message: string): void {
  const g = doc();
  mutate(g);
  expectError(() => parseGenesis(g), MalformedError, { code: 'MALFORMED_INPUT', message });
}

// ---------------------------------------------------------------------------------------------
// presets and acceptance

test('PRESETS: mainnet 12 s × 32 slots, devnet 2 s × 2 slots; both 30M gas cap, 1 gwei, 32 tokens', () => {
  assert.is(PRESETS.mainnet.slot_seconds, 12);
  assert.is(PRESETS.mainnet.slots_per_epoch, 32);
  assert.is(PRESETS.mainnet.randao_chain_length, 1 << 20);
  assert.is(PRESETS.devnet.slot_seconds, 2);
  assert.is(PRESETS.devnet.slots_per_epoch, 2);
  for (const p of [PRESETS.mainnet, PRESETS.devnet]) {
    assert.is(p.max_gas_per_block, 30_000_000);
    assert.is(p.min_gas_price, GWEI.toString());
    assert.is(p.min_validator_stake, MIN_STAKE);
    assert.is(p.finality_epochs, 2);
  }
});

test('parseGenesis: accepts a valid devnet document unchanged', () => {
  const g = parseGenesis(doc());
  assert.equal(g, VALID);
  assert.is(g.validators.length, 2);
  assert.is(g.validators[1]!.address, toHex(addressFromPublicKey(keys[1]!.publicKey)));
});

test('parseGenesis: normalises hex case (addresses, keys, versions)', () => {
  const g = doc();
  g.config.faucet.address = g.config.faucet.address.toUpperCase().replace('0X', '0x');
  g.alloc[0].address = g.alloc[0].address.toUpperCase().replace('0X', '0x');
  g.validators[0].address = '0x' + g.validators[0].address.slice(2).toUpperCase();
  g.validators[0].public_key = '0x' + g.validators[0].public_key.slice(2).toUpperCase();
  g.validators[0].randao_commitment = '0x' + g.validators[0].randao_commitment.slice(2).toUpperCase();
  g.forks[0].version = '0x0000000A';
  const parsed = parseGenesis(g);
  assert.is(parsed.config.faucet.address, FAUCET);
  assert.is(parsed.alloc[0]!.address, FAUCET);
  assert.is(parsed.validators[0]!.address, VALID.validators[0]!.address);
  assert.is(parsed.validators[0]!.public_key, VALID.validators[0]!.public_key);
  assert.is(parsed.validators[0]!.randao_commitment, VALID.validators[0]!.randao_commitment);
  assert.is(parsed.forks[0]!.version, '0x0000000a');
});

// ---------------------------------------------------------------------------------------------
// hash

test('canonicalJson: keys sorted at every level, arrays keep their order, no whitespace', () => {
  assert.is(canonicalJson({ b: 1, a: [{ d: 2, c: 'x' }, 3], c: null }), '{"a":[{"c":"x","d":2},3],"b":1,"c":null}');
  assert.is(canonicalJson([3, 1, 2]), '[3,1,2]');
  assert.is(canonicalJson('é"'), '"é\\""');
  assert.is(canonicalJson({}), '{}');
});

test('genesisHash = SHA3-256(canonical JSON), stable under key reordering', () => {
  const g = parseGenesis(doc());
  const h = genesisHash(g);
  bytesIs(h, sha3(utf8(canonicalJson(g))));
  bytesIs(genesisHash(reversedKeys(g) as Genesis), h);
  assert.is.not(JSON.stringify(reversedKeys(g)), JSON.stringify(g));
  bytesIs(genesisHash(parseGenesis(reversedKeys(doc()))), h);
  bytesIs(genesisHash(parseGenesis(doc())), h);
});

test('genesisHash changes with any value and with array order', () => {
  const h = genesisHash(VALID);
  bytesNot(genesisHash({ ...VALID, genesis_time: GENESIS_TIME + 1 }), h);
  bytesNot(genesisHash({ ...VALID, chain_id: 'svc-devnet2' }), h);
  bytesNot(genesisHash({ ...VALID, alloc: [...VALID.alloc].reverse() }), h);
  bytesNot(genesisHash({ ...VALID, config: { ...VALID.config, slot_seconds: 3 } }), h);
});

// ---------------------------------------------------------------------------------------------
// rejections

test('rejects a bad chain id', () => {
  expectGenesisError((g) => (g.chain_id = 'abcdefghijklm'), 'chain id must be 1 to 12 bytes of UTF-8 without NUL, got "abcdefghijklm"');
  expectGenesisError((g) => (g.chain_id = 'a\u0000'), 'chain id must be 1 to 12 bytes of UTF-8 without NUL, got "a\\u0000"');
  expectMalformed((g) => (g.chain_id = ''), 'malformed genesis.chain_id: expected a non-empty string');
  expectMalformed((g) => (g.chain_id = 7), 'malformed genesis.chain_id: expected a non-empty string');
});

test('rejects unknown keys at every level', () => {
  expectMalformed((g) => (g.extra = 1), 'malformed genesis.extra: unknown field');
  expectMalformed((g) => (g.config.extra = 1), 'malformed genesis.config.extra: unknown field');
  expectMalformed((g) => (g.config.faucet.extra = 1), 'malformed genesis.config.faucet.extra: unknown field');
  expectMalformed((g) => (g.alloc[1].nonce = 0), 'malformed genesis.alloc[1].nonce: unknown field');
  expectMalformed((g) => (g.validators[1].pubkey = '0x'), 'malformed genesis.validators[1].pubkey: unknown field');
  expectMalformed((g) => (g.forks[2].extra = 1), 'malformed genesis.forks[2].extra: unknown field');
});

test('rejects a validator index gap or reordering', () => {
  expectGenesisError((g) => (g.validators[1].index = 2), 'genesis.validators[1].index must be 1: indices are contiguous from 0');
  expectGenesisError((g) => (g.validators[0].index = 1), 'genesis.validators[0].index must be 0: indices are contiguous from 0');
  expectGenesisError((g) => g.validators.reverse(), 'genesis.validators[0].index must be 0: indices are contiguous from 0');
});

test('rejects an address not derived from the public key', () => {
  expectGenesisError((g) => (g.validators[0].address = g.validators[1].address), 'genesis.validators[0].address does not derive from its public key');
  expectGenesisError((g) => (g.validators[1].public_key = g.validators[0].public_key), 'genesis.validators[1].address does not derive from its public key');
});

test('rejects a stake below the minimum', () => {
  expectGenesisError(
    (g) => (g.validators[1].stake = (32n * WEI_PER_TOKEN - 1n).toString()),
    'genesis.validators[1].stake is below the minimum validator stake 32000000000000000000 wei',
  );
  expectMalformed((g) => (g.validators[1].stake = 32e18), 'malformed genesis.validators[1].stake');
});

test('rejects forks not starting at epoch 0', () => {
  expectGenesisError((g) => (g.forks[0].epoch = 1), 'the first fork must activate at epoch 0');
  expectGenesisError((g) => (g.forks = []), 'genesis.forks must list at least the genesis fork');
  expectGenesisError((g) => delete g.forks, 'genesis.forks must list at least the genesis fork');
});

test('rejects non-increasing fork epochs', () => {
  expectGenesisError((g) => (g.forks[2].epoch = 10), 'fork later must activate after quantum');
  expectGenesisError((g) => (g.forks[2].epoch = 5), 'fork later must activate after quantum');
  expectGenesisError((g) => (g.forks[1].epoch = 0), 'fork quantum must activate after genesis');
});

test('rejects duplicate fork versions and names', () => {
  expectGenesisError((g) => (g.forks[2].version = '0x00000002'), 'fork versions must be unique');
  expectGenesisError((g) => (g.forks[2].version = '0x0000000' + '1'), 'fork versions must be unique');
  // Case differences are the same version.
  expectGenesisError((g) => { g.forks[1].version = '0x0000000a'; g.forks[2].version = '0x0000000A'; }, 'fork versions must be unique');
  expectGenesisError((g) => (g.forks[2].name = 'quantum'), 'fork names must be unique');
  expectMalformed((g) => (g.forks[1].version = '0x000002'), 'malformed genesis.forks[1].version: expected 4 bytes, got 3');
});

test('rejects other inconsistencies', () => {
  expectGenesisError((g) => (g.validators = []), 'genesis.validators must list at least one validator');
  expectGenesisError((g) => { g.validators[1] = { ...g.validators[0], index: 1 }; }, 'genesis.validators lists an address twice');
  expectGenesisError((g) => (g.alloc[1].address = g.alloc[0].address.toUpperCase().replace('0X', '0x')), 'genesis.alloc lists an address twice');
  expectGenesisError((g) => (g.alloc = {}), 'genesis.alloc must be an array');
  expectGenesisError((g) => (g.preset = 'testnet'), 'genesis.preset must be devnet or mainnet');
  expectGenesisError((g) => (g.config.slot_seconds = 0), 'genesis.config.slot_seconds must be at least 1');
  expectGenesisError((g) => (g.config.slots_per_epoch = 0), 'genesis.config.slots_per_epoch must be at least 1');
  expectMalformed((g) => (g.config.slot_seconds = 3601), 'malformed genesis.config.slot_seconds: exceeds 3600');
  expectMalformed((g) => (g.config.max_gas_per_block = '30000000'), 'malformed genesis.config.max_gas_per_block: expected a non-negative integer');
  expectMalformed((g) => (g.config.min_gas_price = '1e9'), 'malformed genesis.config.min_gas_price');
  expectMalformed((g) => (g.alloc[0].balance = '-1'), 'malformed genesis.alloc[0].balance');
  expectMalformed((g) => (g.validators[0].public_key = '0x00'), 'malformed genesis.validators[0].public_key: expected 1952 bytes, got 1');
  expectMalformed((g) => (g.validators[0].randao_commitment = '0x'), 'malformed genesis.validators[0].randao_commitment: expected 32 bytes, got 0');
  expectMalformed((g) => (g.genesis_time = -1), 'malformed genesis.genesis_time: expected a non-negative integer');
  expectMalformed((g) => (g.network_id = '1'), 'malformed genesis.network_id: expected a non-negative integer');
  expectError(() => parseGenesis([]), MalformedError, { message: 'malformed genesis: expected an object' });
});

// ---------------------------------------------------------------------------------------------
// time

test('slotAt: 0 before and at genesis, then one slot per slot_seconds', () => {
  const g = VALID;
  const t0 = GENESIS_TIME * 1000;
  assert.is(slotAt(g, 0), 0);
  assert.is(slotAt(g, t0 - 5000), 0);
  assert.is(slotAt(g, t0), 0);
  assert.is(slotAt(g, t0 + 1999), 0);
  assert.is(slotAt(g, t0 + 2000), 1);
  assert.is(slotAt(g, t0 + 2000 * 10 + 1), 10);
  const mainnet: Genesis = { ...g, config: { ...g.config, ...PRESETS.mainnet } };
  assert.is(slotAt(mainnet, t0 + 11_999), 0);
  assert.is(slotAt(mainnet, t0 + 12_000), 1);
});

test('epochOfSlot: floor(slot / slots_per_epoch)', () => {
  const four: Genesis = { ...VALID, config: { ...VALID.config, slots_per_epoch: 4 } };
  assert.equal([0, 3, 4, 7, 8, 100].map((s) => epochOfSlot(four, s)), [0, 0, 1, 1, 2, 25]);
  assert.equal([0, 1, 2, 3, 100].map((s) => epochOfSlot(VALID, s)), [0, 0, 1, 1, 50], 'the devnet preset: 2-slot epochs');
  const mainnet: Genesis = { ...VALID, config: { ...VALID.config, ...PRESETS.mainnet } };
  assert.equal([0, 31, 32, 64].map((s) => epochOfSlot(mainnet, s)), [0, 0, 1, 2]);
});

test('slotStartMs: (genesis_time + slot × slot_seconds) × 1000, inverse of slotAt', () => {
  assert.is(slotStartMs(VALID, 0), GENESIS_TIME * 1000);
  assert.is(slotStartMs(VALID, 5), (GENESIS_TIME + 10) * 1000);
  for (let s = 0; s < 20; s++) {
    assert.is(slotAt(VALID, slotStartMs(VALID, s)), s);
    assert.is(slotAt(VALID, slotStartMs(VALID, s + 1) - 1), s);
  }
});

test('forkSchedule: exactly one current fork; earlier active, later scheduled', () => {
  const statuses = (epoch: number) => forkSchedule(VALID, epoch).map((f) => f.status);
  assert.equal(statuses(0), ['current', 'scheduled', 'scheduled']);
  assert.equal(statuses(9), ['current', 'scheduled', 'scheduled']);
  assert.equal(statuses(10), ['active', 'current', 'scheduled']);
  assert.equal(statuses(19), ['active', 'current', 'scheduled']);
  assert.equal(statuses(20), ['active', 'active', 'current']);
  assert.equal(statuses(1_000_000), ['active', 'active', 'current']);
  const f = forkSchedule(VALID, 10)[1]!;
  assert.equal(f, { name: 'quantum', epoch: 10, version: '0x00000002', status: 'current' });
  // The document itself is not modified.
  assert.is((VALID.forks[1] as { status?: string }).status, undefined);
});

test.run();
