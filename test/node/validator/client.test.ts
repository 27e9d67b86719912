/**
 * Validator client against a fake beacon (node:http on an ephemeral port, recording every
 * request) that builds the proposer's block as the beacon does (on its head, with a fixed set of
 * transactions and votes) and also serves execution's getPendingTransactions. Time is injected: a fake clock
 * and fake timers, advanced by the test, so each slot phase runs exactly when the test says and
 * `client.idle()` tells when its HTTP exchanges are over (no sleeps).
 *
 * Covered: a proposal at the duty slot that verifies (signature, Merkle root of the built
 * block's transactions, VRF seed and proof, RANDAO reveal hashing to randao_last, height, parent,
 * timestamp); the bearer token on POSTs; one attestation per epoch that verifies; slashing
 * protection allowing an identical re-proposal after a restart, a restarted client skipping
 * quietly a different block (and vote) for a slot (target) it already signed, and refusing a real
 * conflict (below the watermarks) with a warning; retrying after the beacon was down;
 * re-sending, never re-signing, an attestation whose POST was lost; metrics (registry and the
 * HTTP server); the typed client's error codes; the EIP-3076 export/import commands.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseHex, toHex, u64LE } from '../../../src/core/codec/bytes.js';
import { sha3 } from '../../../src/core/crypto/hash.js';
import { vrfVerify } from '../../../src/core/crypto/vrf.js';
import { epochOfSlot, genesisHash, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { type Attestation, attestationFromJson, attestationToJson, signAttestation, verifyAttestation } from '../../../src/core/types/attestation.js';
import { blockFromJson, blockHash, blockToJson, bodyMerkleRoot, decodeBlock, encodeBlock, verifyBlockSignature } from '../../../src/core/types/block.js';
import { encodeBlockTemplate } from '../../../src/api/block-production.js';
import { SIGNATURE_BYTES } from '../../../src/core/constants.js';
import { encodeEnvelopeList, encodeTx, txHash } from '../../../src/core/types/transaction.js';
import { SSZ_MEDIA_TYPE, acceptsSsz } from '../../../src/api/media.js';
import { txToJson } from '../../../src/core/types/transaction-json.js';
import { BeaconClient, BeaconClientError } from '../../../src/client/beacon.js';
import { EngineClient } from '../../../src/client/engine.js';
import { ValidatorClient, type ValidatorClientOptions } from '../../../src/node/validator/client.js';
import { FakeTime } from './fake-time.js';
import { RandaoChain } from '../../../src/node/validator/randao/chain.js';
import { SlashingProtectionDb } from '../../../src/node/validator/slashing/protection.js';
import { captureLog, type LogLine } from '../../helpers/log.js';
import { cliEnv, runCli } from '../../helpers/cli.js';
import { bytesIs } from '../../helpers/assert.js';
import { CHAIN_ID, devnet, transfer } from '../execution/fixture.js';

const { genesis, keys } = devnet();
/** The validator under test: registry index 1 (attestation slot: epoch start + 1). */
const ME = keys.validators[1]!;
const MY_INDEX = 1;
const TOKEN = 'validator-token-0123456789';
const SLOT_MS = genesis.config.slot_seconds * 1000;
const SPE = genesis.config.slots_per_epoch;
const GENESIS_ROOT = toHex(genesisHash(genesis));
/** Built once (65,536 hashes). */
const RANDAO = new RandaoChain(ME.mldsaSeed, genesis.config.randao_chain_length);
const root = (n: number) => toHex(new Uint8Array(32).fill(n));
const start = (slot: number) => slotStartMs(genesis, slot);
/** Transactions the fake execution serves. */
const TXS = [transfer(keys.accounts[0]!, { nonce: 0 }), transfer(keys.accounts[0]!, { nonce: 1 }), transfer(keys.accounts[1]!, { nonce: 0, value: 7n })];

// ---------------------------------------------------------------------------------------------
// Fake beacon (+ execution's getPendingTransactions)

interface Recorded {
  method: string;
  path: string;
  auth: string | undefined;
  body: any;
}

interface Duty {
  slot: number;
  validator_index: number;
  address: string;
  vrf_seed: string;
}

/** Duties of `epoch`: this validator at `mine`, validator 0 elsewhere; seeds distinct per slot. */
function dutiesOf(epoch: number, mine: number[]): Duty[] {
  return Array.from({ length: SPE }, (_, i) => {
    const slot = epoch * SPE + i;
    const v = mine.includes(slot) ? MY_INDEX : 0;
    return { slot, validator_index: v, address: genesis.validators[v]!.address, vrf_seed: toHex(sha3(u64LE(slot), u64LE(0xfeed))) };
  });
}

interface HeadState {
  root: string;
  slot: number;
  index: number;
}

/** A vote the fake beacon offers for inclusion (any signed vote: the client includes what it is given). */
const VOTE = signAttestation(MY_INDEX, { slot: 1, beaconBlockRoot: parseHex(root(0xa1), 'root', 32), source: { epoch: 0, root: parseHex(GENESIS_ROOT, 'root', 32) }, target: { epoch: 0, root: parseHex(GENESIS_ROOT, 'root', 32) } }, ME.mldsa, CHAIN_ID);

class FakeBeacon {
  server: Server | undefined;
  url = '';
  requests: Recorded[] = [];
  /** Every request's socket is destroyed (as if the node were down). */
  down = false;
  /** "METHOD path" of requests whose socket is destroyed once, after recording them. */
  dropOnce = new Set<string>();
  /** The head's branch, oldest first (what dependent roots are read from). */
  private branch: HeadState[] = [{ root: GENESIS_ROOT, slot: 0, index: 0 }, { root: root(0xa3), slot: 3, index: 3 }];
  /** A new head keeps the blocks below its height and slot as its ancestors; the rest of the branch is reorganised away. */
  set head(h: HeadState) {
    this.branch = [...this.branch.filter((b) => b.index < h.index && b.slot < h.slot), h];
  }
  get head(): HeadState {
    return this.branch[this.branch.length - 1]!;
  }
  /** As the beacon names it: the last block before epoch − 1 starts on the head's branch. */
  dependentRoot(epoch: number): string {
    return this.branch.filter((b) => b.slot < (epoch - 1) * SPE).pop()?.root ?? GENESIS_ROOT;
  }
  duties = new Map<number, Duty[]>();
  randaoLast: string | null = toHex(RANDAO.commitment());
  /** What GET /api/v1/validator/block_attestations offers the proposer. */
  votes: Attestation[] = [VOTE];
  /** While true, the duty routes answer 503 BEACON_SYNCING (a peer finalised a checkpoint off its head chain). */
  syncing = false;
  /** POST /api/v1/attestation of these validator indices is answered only once `release()` is called. */
  holdVotesOf = new Set<number>();
  private released: Promise<void> = Promise.resolve();
  private releaseHeld: () => void = () => undefined;

  /** Starts holding the answers to votes of `index` (see holdVotesOf). */
  hold(index: number): void {
    this.holdVotesOf.add(index);
    this.released = new Promise<void>((ok) => (this.releaseHeld = ok));
  }

  /** Answers the held votes. */
  release(): void {
    this.holdVotesOf.clear();
    this.releaseHeld();
  }

  async start(): Promise<void> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok) => this.server!.listen(0, '127.0.0.1', () => ok()));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    await new Promise<void>((ok) => {
      s.close(() => ok());
      s.closeAllConnections();
    });
  }

  posts(path: string): Recorded[] {
    return this.requests.filter((r) => r.method === 'POST' && r.path === path);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (this.down) {
      req.socket.destroy();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const raw = Buffer.concat(chunks);
    // Blocks arrive as SSZ (application/octet-stream): recorded as their wire JSON, like everything else.
    const ssz = req.headers['content-type'] === SSZ_MEDIA_TYPE;
    const text = ssz ? '' : raw.toString('utf8');
    const rec: Recorded = { method: req.method ?? '', path: url.pathname, auth: req.headers.authorization, body: ssz ? blockToJson(decodeBlock(new Uint8Array(raw))) : text ? JSON.parse(text) : undefined };
    this.requests.push(rec);
    const key = `${rec.method} ${rec.path}`;
    if (this.dropOnce.delete(key)) {
      req.socket.destroy();
      return;
    }
    const send = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    const ok = (data: unknown) => send(200, { success: true, data });
    const fail = (status: number, code: string, message: string) => send(status, { success: false, error: { code, message } });
    const checkpoint = { epoch: 0, root: GENESIS_ROOT };
    let m: RegExpExecArray | null;
    if (key === 'GET /api/v1/beacon/head') {
      const e = epochOfSlot(genesis, this.head.slot);
      return ok({ ...this.head, justified: checkpoint, finalized: checkpoint, proposer_dependent_roots: [e, e + 1].map((x) => ({ epoch: x, root: this.dependentRoot(x) })) });
    }
    if ((m = /^GET \/api\/v1\/validator\/duties\/proposer\/(\d+)$/.exec(key))) {
      const epoch = Number(m[1]);
      return ok({ epoch, dependent_root: this.dependentRoot(epoch), duties: this.duties.get(epoch) ?? dutiesOf(epoch, []) });
    }
    if ((m = /^GET \/api\/v1\/validators\/(\w+)$/.exec(key))) {
      const id = m[1]!;
      const v = id.startsWith('0x') ? genesis.validators.find((x) => x.address === id) : genesis.validators[Number(id)];
      if (!v) return fail(404, 'NOT_FOUND', `no validator ${id}`);
      return ok({ index: v.index, address: v.address, active: true, status: 'active', stake: v.stake, balance: null, randao_last: v.index === MY_INDEX ? this.randaoLast : null, duties: [] });
    }
    if (this.syncing && (key === 'GET /api/v1/validator/attestation_data' || key === 'GET /api/v1/validator/block_attestations')) {
      return fail(503, 'BEACON_SYNCING', 'peers finalised epoch 9, which this beacon\'s head does not descend from');
    }
    if (key === 'GET /api/v1/validator/attestation_data') {
      const slot = Number(url.searchParams.get('slot'));
      const epoch = epochOfSlot(genesis, slot);
      return ok({ slot, beacon_block_root: this.head.root, source: checkpoint, target: { epoch, root: this.head.root } });
    }
    if ((m = /^GET \/api\/v1\/validator\/blocks\/(\d+)$/.exec(key))) {
      // As the beacon builds a proposer's block: on its head, with execution's transactions and its votes.
      if (rec.auth !== `Bearer ${TOKEN}`) return fail(401, 'UNAUTHORIZED', 'validator calls need Authorization: Bearer <token>');
      if (this.syncing) return fail(503, 'BEACON_SYNCING', 'peers finalised epoch 9, which this beacon\'s head does not descend from');
      const slot = Number(m[1]);
      const proposer = Number(url.searchParams.get('proposer_index'));
      const epoch = epochOfSlot(genesis, slot);
      const duty = (this.duties.get(epoch) ?? dutiesOf(epoch, [])).find((d) => d.slot === slot)!;
      if (this.head.slot >= slot) return fail(400, 'INVALID_SLOT', `slot ${slot} is not after the head's slot ${this.head.slot}`);
      if (duty.validator_index !== proposer) return fail(400, 'WRONG_PROPOSER', `validator ${proposer} is not the proposer of slot ${slot} on the head's branch`);
      const header = {
        index: this.head.index + 1,
        timestampMs: start(slot),
        parentHash: parseHex(this.head.root, 'root', 32),
        merkleRoot: bodyMerkleRoot(TXS, this.votes, []),
        validatorId: parseHex(duty.address, 'address', 20),
        vrfProof: new Uint8Array(SIGNATURE_BYTES),
        vrfSeed: parseHex(duty.vrf_seed, 'seed', 32),
        randaoReveal: new Uint8Array(32),
        stateRoot: parseHex(postStateOf(this.head.root), 'state root', 32),
      };
      const block = encodeBlock({ header, transactions: TXS, signature: new Uint8Array(SIGNATURE_BYTES), attestations: this.votes, slashings: [] });
      const t = { slot, proposerIndex: proposer, dependentRoot: parseHex(this.dependentRoot(epoch), 'root', 32), randaoLast: proposer === MY_INDEX && this.randaoLast ? parseHex(this.randaoLast, 'randao', 32) : null, block };
      if (acceptsSsz(req.headers.accept)) return void res.writeHead(200, { 'content-type': SSZ_MEDIA_TYPE }).end(encodeBlockTemplate(t));
      return ok({ slot, proposer_index: proposer, dependent_root: this.dependentRoot(epoch), randao_last: t.randaoLast ? toHex(t.randaoLast) : null, block: blockToJson(decodeBlock(block)) });
    }
    if (key === 'GET /api/v1/validator/block_attestations') {
      if (rec.auth !== `Bearer ${TOKEN}`) return fail(401, 'UNAUTHORIZED', 'validator calls need Authorization: Bearer <token>');
      return ok({ slot: Number(url.searchParams.get('slot')), attestations: this.votes.map(attestationToJson) });
    }
    // Execution's block view: a post-state root derived from the hash, so the header's state_root is checkable.
    if ((m = /^GET \/api\/v1\/blocks\/(0x[0-9a-f]{64})$/.exec(key))) return ok({ hash: m[1], state_root: postStateOf(m[1]!) });
    // No BIDs on this chain: the bridge duty's passes find nothing to sign.
    if (key === 'GET /api/v1/bridge/bids') return ok({ bids: [] });
    if (key === 'GET /api/v1/engine/getPendingTransactions') {
      // As execution answers a proposer asking for SSZ: the envelope list in build order.
      if (acceptsSsz(req.headers.accept)) return void res.writeHead(200, { 'content-type': SSZ_MEDIA_TYPE }).end(encodeEnvelopeList(TXS.map(encodeTx)));
      return ok({ count: TXS.length, gas: 63_000, transactions: TXS.map(txToJson) });
    }
    if (rec.method === 'POST' && rec.auth !== `Bearer ${TOKEN}`) return fail(401, 'UNAUTHORIZED', 'validator calls need Authorization: Bearer <token>');
    if (key === 'POST /api/v1/validator/blocks/propose') {
      // As the beacon would: accept, make it the head, advance the validator's RANDAO value.
      const block = blockFromJson(rec.body);
      const hash = toHex(blockHash(block.header));
      const slot = (block.header.timestampMs - genesis.genesis_time * 1000) / SLOT_MS;
      this.head = { root: hash, slot, index: block.header.index };
      this.randaoLast = toHex(block.header.randaoReveal);
      return ok({ block_hash: hash, slot, index: block.header.index, state_root: root(0x55), transactions: block.transactions.length, already_known: false });
    }
    if (key === 'POST /api/v1/attestation') {
      if (this.holdVotesOf.has(rec.body.validator_index)) await this.released;
      return ok({ status: 'applied' });
    }
    return fail(404, 'NOT_FOUND', `no route ${key}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Harness

interface Harness {
  client: ValidatorClient;
  time: FakeTime;
  lines: LogLine[];
}

async function startClient(beacon: FakeBeacon, sp: SlashingProtectionDb, now: number, extra: Partial<ValidatorClientOptions> = {}): Promise<Harness> {
  const time = new FakeTime(now);
  const { log, lines } = captureLog();
  const client = new ValidatorClient({
    genesis,
    keys: ME,
    beaconUrl: beacon.url,
    token: TOKEN,
    slashingDb: sp,
    log,
    clock: time.clock,
    timers: time.timers,
    randaoChain: RANDAO,
    ...extra,
  });
  await client.start();
  await time.advanceTo(now, client);
  return { client, time, lines };
}

async function withBeacon<T>(fn: (beacon: FakeBeacon, sp: SlashingProtectionDb) => Promise<T>): Promise<T> {
  const beacon = new FakeBeacon();
  await beacon.start();
  const sp = await SlashingProtectionDb.open({ memory: true });
  try {
    return await fn(beacon, sp);
  } finally {
    await beacon.stop();
    await sp.close();
  }
}

/** The error a promise rejects with (fails the test if it resolves). */
async function rejection(p: Promise<unknown>): Promise<BeaconClientError> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, BeaconClientError);
    return err as BeaconClientError;
  }
  return assert.unreachable('expected a rejection') as never;
}

function metric(text: string, name: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** Checks everything a beacon checks about a proposal for `slot` on top of `parent`. */
/** The fake execution's post-state root of a block. */
function postStateOf(blockHashHex: string): string {
  return toHex(sha3(parseHex(blockHashHex, 'block hash', 32)));
}

function assertValidBlock(json: unknown, slot: number, parent: HeadState, randaoLast: string, duty: Duty): void {
  const block = blockFromJson(json);
  const h = block.header;
  assert.ok(verifyBlockSignature(block, CHAIN_ID, MY_INDEX, ME.mldsa.publicKey), 'block signature verifies under the validator key and index');
  bytesIs(h.merkleRoot, bodyMerkleRoot(TXS, [VOTE], []), 'Merkle root of the served transactions and attestations');
  assert.equal(block.attestations.map(attestationToJson), [attestationToJson(VOTE)], 'the served attestations are included');
  assert.equal(block.transactions.map((t) => toHex(txHash(t))), TXS.map((t) => toHex(txHash(t))), 'the served transactions, in build order');
  assert.is(toHex(h.vrfSeed), duty.vrf_seed, 'vrf_seed as the duty gave it');
  assert.ok(vrfVerify(ME.mldsa.publicKey, h.vrfSeed, h.vrfProof, CHAIN_ID), 'VRF proof verifies');
  assert.is(toHex(sha3(h.randaoReveal)), randaoLast, 'the RANDAO reveal hashes to randao_last');
  assert.is(h.index, parent.index + 1, 'height = head + 1');
  assert.is(toHex(h.parentHash), parent.root, 'parent = head');
  assert.is(toHex(h.stateRoot), postStateOf(parent.root), "state_root = the parent's post-state root from execution");
  assert.is(h.timestampMs, start(slot), 'timestamp = slot start');
  assert.is(toHex(h.validatorId), ME.address);
}

// ---------------------------------------------------------------------------------------------
const Duties = suite('validator client: duties');

Duties('proposes a verifying block at its duty slot with the bearer token, then attests once per epoch', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    const parent = { ...beacon.head };
    const randaoLast = beacon.randaoLast!;
    // Start in slot 4 (epoch 1), after its attestation point: slot 4 belongs to validator 0.
    const { client, time, lines } = await startClient(beacon, sp, start(4) + 1500, { metricsPort: 0 });
    try {
      assert.is(client.validatorIndex, MY_INDEX, 'index resolved from the beacon by address');
      assert.equal(beacon.posts('/api/v1/validator/blocks/propose'), []);
      assert.equal(beacon.posts('/api/v1/attestation'), [], 'slot 4 is before its attestation slot (5)');

      await time.advanceTo(start(5), client);
      const blocks = beacon.posts('/api/v1/validator/blocks/propose');
      assert.is(blocks.length, 1, 'one proposal at slot 5');
      assert.is(blocks[0]!.auth, `Bearer ${TOKEN}`);
      assertValidBlock(blocks[0]!.body, 5, parent, randaoLast, beacon.duties.get(1)![1]!);
      // Its own block is the slot's block: the attestation follows at once, on that block.
      const atts = beacon.posts('/api/v1/attestation');
      assert.is(atts.length, 1, 'attested right after its own block');
      assert.is(atts[0]!.auth, `Bearer ${TOKEN}`);
      const att = attestationFromJson(atts[0]!.body);
      assert.ok(verifyAttestation(att, ME.mldsa.publicKey, CHAIN_ID), 'attestation signature verifies');
      assert.is(att.validatorIndex, MY_INDEX);
      assert.is(att.data.slot, 5);
      assert.is(toHex(att.data.beaconBlockRoot), toHex(blockHash(blockFromJson(blocks[0]!.body).header)), 'votes for the block it proposed');
      assert.equal([att.data.source.epoch, att.data.target.epoch], [0, 1]);
      // No GET carried the token's absence as a problem, and every POST carried it.
      assert.ok(beacon.requests.filter((r) => r.method === 'POST').every((r) => r.auth === `Bearer ${TOKEN}`));

      // The rest of epoch 1: no more duties, no second vote for target epoch 1.
      await time.advanceTo(start(8) - 1, client);
      assert.is(beacon.posts('/api/v1/validator/blocks/propose').length, 1);
      assert.is(beacon.posts('/api/v1/attestation').length, 1, 'one attestation per epoch');
      // Epoch 2: attestation slot 9; the head (slot 5) is older, so it attests at a third of the slot.
      await time.advanceTo(start(9) + Math.floor(SLOT_MS / 3) - 1, client);
      assert.is(beacon.posts('/api/v1/attestation').length, 1, 'not before a third of slot 9');
      await time.advanceTo(start(9) + Math.floor(SLOT_MS / 3), client);
      const atts2 = beacon.posts('/api/v1/attestation');
      assert.is(atts2.length, 2);
      const att2 = attestationFromJson(atts2[1]!.body);
      assert.ok(verifyAttestation(att2, ME.mldsa.publicKey, CHAIN_ID));
      assert.equal([att2.data.slot, att2.data.target.epoch], [9, 2]);
      // Epoch 3: another validator's block for slot 13 is the head by a sixth of the slot, so the
      // head poll attests then, without waiting for the third.
      await time.advanceTo(start(13), client);
      beacon.head = { root: root(0xdd), slot: 13, index: 6 };
      await time.advanceTo(start(13) + Math.floor(SLOT_MS / 6), client);
      const atts3 = beacon.posts('/api/v1/attestation');
      assert.is(atts3.length, 3, 'attested at the head poll');
      const att3 = attestationFromJson(atts3[2]!.body);
      assert.equal([att3.data.slot, toHex(att3.data.beaconBlockRoot), att3.data.target.epoch], [13, root(0xdd), 3]);
      // Duties of epoch 2 were fetched once (prefetched at the end of epoch 1).
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/2').length, 1);
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/1').length, 1, 'duties cached per epoch');

      const text = await client.metrics.text();
      assert.is(metric(text, 'service_validator_blocks_proposed_total'), 1);
      assert.is(metric(text, 'service_validator_attestations_total'), 3);
      assert.is(metric(text, 'service_validator_slashing_refusals_total'), 0);
      // Every signature it made: the block and its VRF proof, and the three votes; the canonical
      // encoding of the block it signed is the spec's 3409 bytes.
      assert.match(text, /^quantum_canonical_sig_generated_total\{kind="block"\} 1$/m);
      assert.match(text, /^quantum_canonical_sig_generated_total\{kind="vrf"\} 1$/m);
      assert.match(text, /^quantum_canonical_sig_generated_total\{kind="attestation"\} 3$/m);
      assert.match(text, /^quantum_canonical_sig_generated_total\{kind="transaction"\} 0$/m);
      assert.match(text, /^quantum_canonical_bytes_len 3409$/m);
      const res = await fetch(`${client.metricsUrl}/metrics`);
      assert.is(res.status, 200);
      assert.is(metric(await res.text(), 'service_validator_blocks_proposed_total'), 1, 'served over HTTP');
      assert.is((await fetch(`${client.metricsUrl}/other`)).status, 404);
      assert.ok(lines.some((l) => l.level === 'info' && l.msg === 'block proposed' && l.fields.slot === 5));
      assert.equal(lines.filter((l) => l.level === 'warn' || l.level === 'error'), []);
    } finally {
      await client.stop();
    }
    assert.is(client.metricsUrl, undefined, 'metrics server closed');
  });
});

Duties('waits for genesis, and never proposes at slot 0', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.head = { root: GENESIS_ROOT, slot: 0, index: 0 };
    beacon.duties.set(0, dutiesOf(0, [0, 1, 2, 3]));
    const { client, time } = await startClient(beacon, sp, start(0) - 5_000);
    try {
      assert.equal(beacon.requests.filter((r) => r.path.startsWith('/api/v1/validator/')), [], 'nothing before genesis');
      await time.advanceTo(start(1), client);
      const blocks = beacon.posts('/api/v1/validator/blocks/propose');
      assert.is(blocks.length, 1, 'slot 1 only: slot 0 is the genesis block');
      assertValidBlock(blocks[0]!.body, 1, { root: GENESIS_ROOT, slot: 0, index: 0 }, toHex(RANDAO.commitment()), beacon.duties.get(0)![1]!);
    } finally {
      await client.stop();
    }
  });
});

Duties('duties drawn on another branch are fetched again before signing: the proposal carries the head branch\'s seed', async () => {
  await withBeacon(async (beacon, sp) => {
    // Epoch 2's duties, as drawn while the head is a block at slot 3 (their dependent root).
    const onOld = dutiesOf(2, [9]);
    beacon.duties.set(1, dutiesOf(1, []));
    beacon.duties.set(2, onOld);
    const { client, time, lines } = await startClient(beacon, sp, start(7) - 1);
    try {
      // Prefetched at the end of epoch 1, on the slot-3 branch.
      await time.advanceTo(start(8) - 1, client);
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/2').length, 1, 'prefetched');
      // Reorg: the head moves to a competing block at slot 4, whose branch has no block before
      // slot 4 (dependent root: genesis), so epoch 2 is drawn from another mix: other seeds.
      beacon.head = { root: root(0xb4), slot: 4, index: 1 };
      const onNew = dutiesOf(2, [9, 10]).map((d) => ({ ...d, vrf_seed: toHex(sha3(u64LE(d.slot), u64LE(0xbeef))) }));
      beacon.duties.set(2, onNew);
      const parent = { ...beacon.head };
      const randaoLast = beacon.randaoLast!;
      await time.advanceTo(start(9), client);
      const blocks = beacon.posts('/api/v1/validator/blocks/propose');
      assert.is(blocks.length, 1, 'proposed at slot 9');
      assertValidBlock(blocks[0]!.body, 9, parent, randaoLast, onNew[1]!);
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/2').length, 2, 'fetched again once, after the reorg');
      assert.ok(lines.some((l) => l.msg === 'proposer duties were drawn on another branch than the head\'s: fetching them again' && l.fields.dependent_root === GENESIS_ROOT && l.fields.duties_dependent_root === root(0xa3)));

      // Back to a branch with a block at slot 3 (dependent root: that block), where slot 10 is
      // not this validator's: the cached duty says it is, and nothing is signed.
      beacon.head = { root: root(0xc3), slot: 3, index: 3 };
      beacon.duties.set(2, dutiesOf(2, []));
      await time.advanceTo(start(10) + Math.floor(SLOT_MS / 3), client);
      assert.is(beacon.posts('/api/v1/validator/blocks/propose').length, 1, 'no block for slot 10 on a branch where it is not this validator\'s');
      assert.ok(lines.some((l) => l.msg === 'not proposing: on the head\'s branch this slot is not this validator\'s' && l.fields.slot === 10 && l.fields.proposer === 0));
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/2').length, 3);
      assert.equal(lines.filter((l) => l.msg.startsWith('the beacon refused')), []);
    } finally {
      await client.stop();
    }
  });
});

Duties('two keys in one process: a key whose vote hangs holds up neither the other key\'s vote nor the next proposal', async () => {
  await withBeacon(async (beacon, sp) => {
    // Epoch 2: this validator (index 1) proposes at 8 and 9 and attests at 9; validator 0 (index 0,
    // also in this process) attests at slot 8.
    beacon.duties.set(2, dutiesOf(2, [8, 9]));
    beacon.hold(0);
    const other = keys.validators[0]!;
    const time = new FakeTime(start(8) - 100);
    const { log, lines } = captureLog();
    const client = new ValidatorClient({
      genesis, keys: [other, ME], beaconUrl: beacon.url, token: TOKEN, slashingDb: sp, log, clock: time.clock, timers: time.timers,
      randaoChain: [new RandaoChain(other.mldsaSeed, genesis.config.randao_chain_length), RANDAO], requestTimeoutMs: 60_000,
    });
    const seen = async <T>(what: string, f: () => T | undefined): Promise<T> => {
      // Real time, but bounded by a generous deadline: the beacon is on loopback.
      for (const deadline = Date.now() + 30_000; ; ) {
        const v = f();
        if (v !== undefined) return v;
        if (Date.now() > deadline) return assert.unreachable(`${what} never happened`) as never;
        await new Promise((ok) => setImmediate(ok));
      }
    };
    try {
      await client.start();
      assert.equal(client.validators.map((v) => v.index), [0, MY_INDEX]);
      // Slot 8's deadline: validator 0 votes, and its POST hangs.
      time.fireUpTo(start(8) + SLOT_MS / 3);
      await seen('validator 0\'s vote posted', () => (beacon.posts('/api/v1/attestation').some((r) => r.body.validator_index === 0) ? true : undefined));
      await seen('the slot 8 proposal', () => (beacon.posts('/api/v1/validator/blocks/propose').length === 1 ? true : undefined));
      const parent = { ...beacon.head };
      const randaoLast = beacon.randaoLast!;
      // Slot 9: the proposal and this validator's own vote go through while validator 0's vote still hangs.
      time.fireUpTo(start(9));
      const block = await seen('the slot 9 proposal', () => beacon.posts('/api/v1/validator/blocks/propose')[1]);
      assertValidBlock(block.body, 9, parent, randaoLast, dutiesOf(2, [8, 9])[1]!);
      const mine = await seen('this validator\'s vote at slot 9', () => beacon.posts('/api/v1/attestation').find((r) => r.body.validator_index === MY_INDEX));
      assert.is(mine.body.data.slot, 9);
      assert.ok(beacon.holdVotesOf.has(0), 'validator 0\'s vote was still unanswered');
      beacon.release();
      await client.idle();
      const sent = lines.filter((l) => l.msg === 'attestation sent').map((l) => [l.fields.validator, l.fields.slot]);
      assert.equal(sent.sort(), [[other.address, 8], [ME.address, 9]].sort());
    } finally {
      beacon.release();
      await client.stop();
    }
  });
});

Duties('a beacon syncing the network\'s finalised chain (BEACON_SYNCING): no block and no vote is signed on its head, duties resume once it has synced', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    beacon.syncing = true;
    const { client, time, lines } = await startClient(beacon, sp, start(4) + 1500);
    try {
      // Slot 5 is its proposal and its vote of epoch 1: both skipped, nothing signed.
      await time.advanceTo(start(8) - 1, client);
      assert.equal(beacon.posts('/api/v1/validator/blocks/propose'), []);
      assert.equal(beacon.posts('/api/v1/attestation'), []);
      assert.is(sp.watermarks(toHex(ME.mldsa.publicKey)), undefined, 'slashing protection holds nothing: nothing was signed');
      assert.ok(lines.some((l) => l.msg === 'duty skipped: the beacon is syncing the network\'s finalised chain' && l.fields.code === 'BEACON_SYNCING'));
      assert.not.ok(lines.some((l) => l.msg === 'validator duty failed'), 'a skip, not a failure');
      // Synced: epoch 2's vote goes out.
      beacon.syncing = false;
      await time.advanceTo(start(9) + Math.floor(SLOT_MS / 3), client);
      assert.is(beacon.posts('/api/v1/attestation').length, 1);
    } finally {
      await client.stop();
    }
  });
});

Duties.run();

// ---------------------------------------------------------------------------------------------
const Protection = suite('validator client: slashing protection');

Protection('after a restart: the identical block is re-sent, a different one for the same slot is refused', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    const before = { head: { ...beacon.head }, randaoLast: beacon.randaoLast };
    const a = await startClient(beacon, sp, start(5) - 100);
    await a.time.advanceTo(start(5) + 100, a.client);
    await a.client.stop();
    const first = beacon.posts('/api/v1/validator/blocks/propose');
    assert.is(first.length, 1);
    assert.is(beacon.posts('/api/v1/attestation').length, 1);

    // The block never made it (beacon restarted on the old head): a restarted client builds the
    // same block, which slashing protection lets through as an exact repeat.
    beacon.head = { ...before.head };
    beacon.randaoLast = before.randaoLast;
    const b = await startClient(beacon, sp, start(5) + 100);
    await b.client.stop();
    const second = beacon.posts('/api/v1/validator/blocks/propose');
    assert.is(second.length, 2);
    assert.equal(second[1]!.body, first[0]!.body, 'byte-identical re-proposal');
    assert.is(beacon.posts('/api/v1/attestation').length, 2);
    assert.equal(beacon.posts('/api/v1/attestation')[1]!.body, beacon.posts('/api/v1/attestation')[0]!.body, 'identical vote');

    // Now the head changed (another parent at the same height): a different block for slot 5
    // would be a double proposal, and a vote with another head a double vote. The restarted
    // client finds both duties done in its database and skips them quietly (no warning, no
    // refusal): nothing is signed, nothing sent.
    beacon.head = { root: root(0xb3), slot: 3, index: 3 };
    beacon.randaoLast = before.randaoLast;
    const c = await startClient(beacon, sp, start(5) + 100);
    await c.time.advanceTo(start(5) + Math.floor(SLOT_MS / 3), c.client);
    await c.client.stop();
    assert.is(beacon.posts('/api/v1/validator/blocks/propose').length, 2, 'no third proposal');
    assert.is(beacon.posts('/api/v1/attestation').length, 2, 'no conflicting vote');
    // It did go as far as reading the head, so the skip came from the slashing-protection records.
    assert.ok(c.lines.some((l) => l.level === 'debug' && l.msg === 'proposal skipped: this key already signed a block at this slot' && l.fields.parent === root(0xb3)));
    assert.ok(c.lines.some((l) => l.level === 'debug' && l.msg === 'attestation skipped: this key already signed one for the target epoch'));
    assert.equal(c.lines.filter((l) => l.level === 'warn' || l.level === 'error').map((l) => l.msg), [], 'quiet');
    const text = await c.client.metrics.text();
    assert.is(metric(text, 'service_validator_slashing_refusals_total'), 0);
    assert.is(metric(text, 'service_validator_duties_already_signed_total{kind="block"}'), 1);
    assert.is(metric(text, 'service_validator_duties_already_signed_total{kind="attestation"}'), 1);
    assert.is(metric(text, 'service_validator_blocks_proposed_total'), 0);
    assert.is(c.lines.filter((l) => l.msg.startsWith('slashing protection refused')).length, 0);
  });
});

Protection('a real conflict (below the watermarks of an imported history) is still refused, with a warning', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    const pk = toHex(ME.mldsa.publicKey);
    const epoch = epochOfSlot(genesis, 5);
    // As if imported from another client: a block at a later slot and a vote for a later target.
    // Nothing is on record at slot 5 or for this target, so these are not duties already done.
    await sp.checkAndRecordBlock(pk, 7, root(0x77));
    await sp.checkAndRecordAttestation(pk, 0, epoch + 1, root(0x78));
    const c = await startClient(beacon, sp, start(5) - 100);
    await c.time.advanceTo(start(5) + Math.floor(SLOT_MS / 3), c.client);
    await c.client.stop();
    assert.is(beacon.posts('/api/v1/validator/blocks/propose').length, 0);
    assert.is(beacon.posts('/api/v1/attestation').length, 0);
    const refusals = c.lines.filter((l) => l.level === 'warn' && l.msg.startsWith('slashing protection refused'));
    assert.equal(refusals.map((l) => l.fields.rule).sort(), ['BLOCK_BELOW_WATERMARK', 'TARGET_BELOW_WATERMARK']);
    const text = await c.client.metrics.text();
    assert.is(metric(text, 'service_validator_slashing_refusals_total'), 2);
    assert.is(metric(text, 'service_validator_duties_already_signed_total{kind="block"}'), undefined);
  });
});

Protection.run();

// ---------------------------------------------------------------------------------------------
const Outage = suite('validator client: beacon outages');

Outage('keeps its timer while the beacon is down and proposes and attests once it is back', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5, 6]));
    beacon.down = true;
    const { client, time, lines } = await startClient(beacon, sp, start(4) + 1500);
    try {
      assert.is(client.validatorIndex, undefined, 'index unknown while the beacon is down');
      await time.advanceTo(start(5) + SLOT_MS - 1, client);
      assert.equal(beacon.requests, [], 'slot 5 missed: nothing reached the beacon');
      beacon.down = false;
      const parent = { ...beacon.head };
      const randaoLast = beacon.randaoLast!;
      await time.advanceTo(start(6), client);
      assert.is(client.validatorIndex, MY_INDEX);
      const blocks = beacon.posts('/api/v1/validator/blocks/propose');
      assert.is(blocks.length, 1, 'proposed at slot 6');
      assertValidBlock(blocks[0]!.body, 6, parent, randaoLast, beacon.duties.get(1)![2]!);
      const atts = beacon.posts('/api/v1/attestation');
      assert.is(atts.length, 1, 'epoch 1 attestation made up at slot 6');
      assert.is(attestationFromJson(atts[0]!.body).data.slot, 6);
      const warns = lines.filter((l) => l.level === 'warn');
      assert.is(warns.length, 1, `one warning for the whole outage: ${JSON.stringify(warns)}`);
      assert.is(warns[0]!.msg, 'beacon node unreachable: retrying at the next slot');
      assert.is(warns[0]!.fields.code, 'UNREACHABLE');
      assert.ok(lines.some((l) => l.level === 'info' && l.msg === 'beacon node reachable again'));
      assert.equal(lines.filter((l) => l.level === 'error'), []);
    } finally {
      await client.stop();
    }
  });
});

Outage('started before its beacon: asks again every 200 ms and proposes in the slot the beacon comes up, not a slot later', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    beacon.down = true;
    const { client, time, lines } = await startClient(beacon, sp, start(5) - 300);
    try {
      // Slot 5's proposal phase finds the beacon down; 300 ms into the slot it comes up.
      await time.advanceTo(start(5) + 300, client);
      assert.equal(beacon.posts('/api/v1/validator/blocks/propose'), []);
      beacon.down = false;
      const parent = { ...beacon.head };
      const randaoLast = beacon.randaoLast!;
      // Well before the attestation phase (a third of the slot), which was the next time the old
      // client asked: the first-contact retry found the beacon and checked the slot again.
      await time.advanceTo(start(5) + 550, client);
      assert.is(client.validatorIndex, MY_INDEX);
      const blocks = beacon.posts('/api/v1/validator/blocks/propose');
      assert.is(blocks.length, 1, 'slot 5 proposed once the beacon answered');
      assertValidBlock(blocks[0]!.body, 5, parent, randaoLast, beacon.duties.get(1)![1]!);
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/duties/proposer/1').length, 1, 'duties fetched once');
      assert.is(lines.filter((l) => l.level === 'warn').length, 1, 'one warning for the outage');
      // Once the beacon answered, the retry stops: the slot phases go on as usual.
      const before = beacon.requests.length;
      await time.advanceTo(start(6) - 1, client);
      assert.ok(beacon.requests.slice(before).every((r) => r.path !== `/api/v1/validators/${ME.address}` || r.method !== 'GET'), 'no further index lookups');
    } finally {
      await client.stop();
    }
  });
});

Outage('an attestation whose POST was lost is re-sent unchanged at the next phase, not re-signed', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.dropOnce.add('POST /api/v1/attestation');
    const { client, time } = await startClient(beacon, sp, start(5) - 1);
    try {
      await time.advanceTo(start(5) + Math.floor(SLOT_MS / 3), client);
      assert.is(beacon.posts('/api/v1/attestation').length, 1, 'sent once, lost');
      assert.is(metric(await client.metrics.text(), 'service_validator_attestations_total'), 0);
      // The head moves on, but the vote is already signed: the same bytes go out again.
      beacon.head = { root: root(0xc6), slot: 6, index: 4 };
      await time.advanceTo(start(6) + Math.floor(SLOT_MS / 6), client);
      const atts = beacon.posts('/api/v1/attestation');
      assert.is(atts.length, 2);
      assert.equal(atts[1]!.body, atts[0]!.body);
      assert.is(beacon.requests.filter((r) => r.path === '/api/v1/validator/attestation_data').length, 1, 'attestation data fetched once');
      assert.is(metric(await client.metrics.text(), 'service_validator_attestations_total'), 1);
      assert.is(metric(await client.metrics.text(), 'service_validator_slashing_refusals_total'), 0);
      assert.match(await client.metrics.text(), /^quantum_canonical_sig_generated_total\{kind="attestation"\} 1$/m, 'sent twice, signed once');
    } finally {
      await client.stop();
    }
  });
});

Outage('a refused proposal is logged with the beacon code; a wrong token is UNAUTHORIZED', async () => {
  await withBeacon(async (beacon, sp) => {
    beacon.duties.set(1, dutiesOf(1, [5]));
    const { client, time, lines } = await startClient(beacon, sp, start(5) - 1, { token: 'not-the-token' });
    try {
      await time.advanceTo(start(5) + Math.floor(SLOT_MS / 3), client);
      // The beacon refuses the token at the block template: nothing is signed or posted.
      assert.is(beacon.requests.find((r) => r.path === '/api/v1/validator/blocks/5')!.auth, 'Bearer not-the-token');
      assert.equal(beacon.posts('/api/v1/validator/blocks/propose'), []);
      const refused = lines.find((l) => l.msg.startsWith('not proposing: the beacon cannot build the block'));
      assert.ok(refused, JSON.stringify(lines));
      assert.is(refused!.fields.code, 'UNAUTHORIZED');
      assert.is(refused!.fields.http_status, 401);
      assert.match(refused!.msg, /--token-file/);
      assert.is(metric(await client.metrics.text(), 'service_validator_blocks_proposed_total'), 0);
    } finally {
      await client.stop();
    }
  });
});

Outage.run();

// ---------------------------------------------------------------------------------------------
const Client = suite('beacon client');

Client('typed answers, server codes, UNREACHABLE, BAD_RESPONSE, token validation', async () => {
  await withBeacon(async (beacon) => {
    const c = new BeaconClient(beacon.url + '/', { token: TOKEN });
    assert.is(c.baseUrl, beacon.url);
    const head = await c.head();
    assert.equal(head, { root: root(0xa3), slot: 3, index: 3, justified: { epoch: 0, root: GENESIS_ROOT }, finalized: { epoch: 0, root: GENESIS_ROOT }, proposer_dependent_roots: [{ epoch: 0, root: GENESIS_ROOT }, { epoch: 1, root: GENESIS_ROOT }] });
    const v = await c.validator(ME.address.toUpperCase().replace('0X', '0x'));
    assert.equal([v.index, v.address, v.active, v.randao_last], [MY_INDEX, ME.address, true, beacon.randaoLast]);
    assert.is((await c.validator(0)).randao_last, null);
    const notFound = await rejection(c.validator(7));
    assert.equal([notFound.code, notFound.httpStatus], ['NOT_FOUND', 404]);
    const duties2 = await c.proposerDuties(2);
    assert.is(duties2.duties.length, SPE);
    assert.is(duties2.dependent_root, root(0xa3), 'epoch 2 depends on the last block before slot 4');
    assert.equal((await c.attestationData(6)).target.epoch, 1);
    assert.equal(await c.submitAttestation({ validator_index: 0, data: { slot: 0, beacon_block_root: GENESIS_ROOT, source: { epoch: 0, root: GENESIS_ROOT }, target: { epoch: 0, root: GENESIS_ROOT } }, signature: '0x00' }), { status: 'applied' });
    const pending = await new EngineClient(beacon.url).pendingTransactions();
    assert.is(pending.count, TXS.length);

    const unauth = await rejection(new BeaconClient(beacon.url, { token: 'wrong' }).submitAttestation({} as never));
    assert.equal([unauth.code, unauth.httpStatus, unauth.transport], ['UNAUTHORIZED', 401, false]);

    beacon.down = true;
    const down = await rejection(c.head());
    assert.equal([down.code, down.httpStatus, down.transport], ['UNREACHABLE', undefined, true]);
    assert.match(down.message, /cannot reach the beacon node at http:\/\/127\.0\.0\.1:\d+ \(connection reset\)/);
    beacon.down = false;

    // A server that is not a beacon: well-formed envelope, wrong shape.
    beacon.head = { root: 'nope', slot: 1, index: 1 } as never;
    const bad = await rejection(c.head());
    assert.is(bad.code, 'BAD_RESPONSE');
    assert.match(bad.message, /GET \/api\/v1\/beacon\/head: root: expected 0x and 64 hex digits/);

    assert.throws(() => new BeaconClient(beacon.url, { token: 'two words' }), /printable ASCII without spaces/);
    assert.throws(() => new BeaconClient('ftp://x'), /must be an http/);
  });
  const closed = new FakeBeacon();
  await closed.start();
  await closed.stop();
  const refused = await rejection(new BeaconClient(closed.url).head());
  assert.is(refused.code, 'UNREACHABLE');
  assert.match(refused.message, /connection refused/);
});

Client.run();

// ---------------------------------------------------------------------------------------------
const Cli = suite('svc node validator slashing-protection');

Cli('export and import EIP-3076 files through the CLI; another genesis is refused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'svc-validator-'));
  try {
    const env = cliEnv(dir);
    const genesisFile = join(dir, 'genesis.json');
    await writeFile(genesisFile, JSON.stringify(genesis));
    const dataDir = join(dir, 'v1');
    const pk = toHex(ME.mldsa.publicKey);
    const gvr = GENESIS_ROOT;
    const file = join(dir, 'in.json');
    await writeFile(
      file,
      JSON.stringify({
        metadata: { interchange_format_version: '5', genesis_validators_root: gvr },
        data: [{ pubkey: pk, signed_blocks: [{ slot: '12', signing_root: root(0x12) }], signed_attestations: [{ source_epoch: '2', target_epoch: '3', signing_root: root(0x23) }] }],
      }),
    );
    const missing = await runCli(['node', 'validator', 'slashing-protection', 'export', '--data-dir', dataDir, '--genesis', genesisFile], env);
    assert.is(missing.code, 1);
    assert.match(missing.stderr, /holds no slashing-protection database/);

    const imp = await runCli(['node', 'validator', 'slashing-protection', 'import', file, '--data-dir', dataDir, '--genesis', genesisFile, '--json'], env);
    assert.is(imp.code, 0, imp.stderr);
    assert.equal(JSON.parse(imp.stdout), { file, validators: 1, blocks_added: 1, attestations_added: 1 });
    const again = await runCli(['node', 'validator', 'slashing-protection', 'import', file, '--data-dir', dataDir, '--genesis', genesisFile, '--json'], env);
    assert.equal(JSON.parse(again.stdout), { file, validators: 1, blocks_added: 0, attestations_added: 0 }, 'idempotent');

    const out = join(dir, 'out.json');
    const exp = await runCli(['node', 'validator', 'slashing-protection', 'export', '--data-dir', dataDir, '--genesis', genesisFile, '--out', out, '--json'], env);
    assert.is(exp.code, 0, exp.stderr);
    assert.equal(JSON.parse(exp.stdout), { file: out, genesis_validators_root: gvr, validators: 1, blocks: 1, attestations: 1 });
    const doc = JSON.parse(await readFile(out, 'utf8'));
    assert.equal(doc.data[0].signed_blocks, [{ slot: '12', signing_root: root(0x12) }]);
    assert.equal(doc.data[0].signed_attestations, [{ source_epoch: '2', target_epoch: '3', signing_root: root(0x23) }]);

    // The exported history protects a validator client using this data directory.
    const sp = await SlashingProtectionDb.open({ dir: join(dataDir, 'slashing-protection') });
    try {
      assert.equal(sp.watermarks(pk), { slot: 12, sourceEpoch: 2, targetEpoch: 3 });
    } finally {
      await sp.close();
    }

    // Another chain's genesis: the data directory is bound to the first one.
    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ ...genesis, chain_id: 'svc-other' }));
    const wrong = await runCli(['node', 'validator', 'slashing-protection', 'import', file, '--data-dir', dataDir, '--genesis', other], env);
    assert.is(wrong.code, 1);
    assert.match(wrong.stderr, /holds slashing protection for genesis 0x[0-9a-f]{64}, not 0x/);
    const wrongFile = await runCli(['node', 'validator', 'slashing-protection', 'import', file, '--data-dir', join(dir, 'v2'), '--genesis', other], env);
    assert.is(wrongFile.code, 1);
    assert.match(wrongFile.stderr, /interchange is for genesis validators root/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

Cli.run();

