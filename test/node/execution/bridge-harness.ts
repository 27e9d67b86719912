/**
 * The bridge tests' execution harness (not a test file itself): a genesis G with a bridge reserve
 * and two validators whose keys the fixture holds, counterparts X and Y whose genesis and keys
 * the tests hold, a node over a data directory with a proposer's view of its chain, and the
 * operations (register signed by G's validators, lock, release from X, settlement proofs).
 */
import * as assert from 'uvu/assert';
import { utf8 } from '../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS, WEI_PER_TOKEN } from '../../../src/core/constants.js';
import { type Genesis, canonicalJson, genesisHash, slotStartMs } from '../../../src/core/genesis/genesis.js';
import { type Block } from '../../../src/core/types/block.js';
import { type StandardTx } from '../../../src/core/types/transaction.js';
import { type BidFields, BridgeOp, LockState, RELEASED_WORD, bidId, lockSlot, releaseSlot, stateWord } from '../../../src/core/bridge/types.js';
import { type BridgeOperation, encodeBridgeOp } from '../../../src/core/bridge/ops.js';
import { bridgeGas } from '../../../src/core/bridge/verify.js';
import { registrationTerms, signRegistration } from '../../../src/core/bridge/registration.js';
import { buildGenesis } from '../../../src/genesis/build.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { DEV_MNEMONIC } from '../../../src/wallet/derivation.js';
import type { WalletKeys } from '../../../src/wallet/derivation.js';
import { bidSignatures, finalityProof, testChain } from '../../helpers/bridge.js';
import {
  CHAIN_ID,
  NETWORK_ID,
  type ParentRef,
  devnet,
  drawnSlot,
  expectEnvelope,
  genesisBranch,
  importOk,
  makeBlock,
  startNode,
  submit,
  transfer,
  UNIT_SLOTS_PER_EPOCH,
} from './fixture.js';

export const TOKEN = WEI_PER_TOKEN;
export const RESERVE = 1_000n * TOKEN;
// Slot 0 an hour ago: block times (from slot 1 on) are in the past, timeouts an hour ahead are
// in the future for both the blocks and admission's clock.
export const NOW = Math.floor(Date.now() / 1000);
export const G: Genesis = buildGenesis({ validators: 2, accounts: 2, preset: 'devnet', chainId: CHAIN_ID, networkId: NETWORK_ID, genesisTime: NOW - 3600, mnemonic: DEV_MNEMONIC, bridgeReserve: RESERVE, timing: { slotsPerEpoch: UNIT_SLOTS_PER_EPOCH } }).genesis;
export const SELF = genesisHash(G);
export const X = testChain('svc-bridge-x', 5);
export const Y = testChain('svc-bridge-y', 6);
export const TIMEOUT = NOW + 3600;
export const keys = devnet().keys;
export const alice = keys.accounts[0]!;
export const bob = keys.accounts[1]!;
export const RECIPIENT = '0x' + 'c3'.repeat(20);

/** The next block of validator 0 after `parent`, timed by `g` (whose slot 0 differs from the fixture's). */
export function nextBlock(g: Genesis, parent: ParentRef, txs: StandardTx[]): Block {
  const { slot } = drawnSlot(g, parent.branch, 0);
  return makeBlock(parent, { txs, slot, timestampMs: slotStartMs(g, slot) });
}

/** A node on G over a data directory, and the chain as a proposer follows it. */
export class Harness {
  parent!: ParentRef;
  private nonces = new Map<string, bigint>();
  /** The last block imported, with its header (what a finality update names). */
  last?: Block;
  constructor(
    public node: ExecutionNode,
    readonly genesis: Genesis = G,
  ) {}

  static async start(dir: string, genesis: Genesis = G): Promise<Harness> {
    const h = new Harness(await startNode({ dataDir: dir, genesis }), genesis);
    const head = h.node.chain.head();
    const rec = (await h.node.chain.record(head.hash))!;
    assert.is(head.index, 0);
    h.parent = { hash: head.hash, index: 0, timestamp: rec.timestamp, branch: genesisBranch(genesis), stateRoot: rec.state_root };
    return h;
  }

  /** A signed bridge operation from `from` with gasLimit = bridgeGas(data) (unless given). */
  op(from: WalletKeys, o: BridgeOperation | Uint8Array, value = 0n, gasLimit?: bigint): StandardTx {
    const data = o instanceof Uint8Array ? o : encodeBridgeOp(o);
    const nonce = this.nonces.get(from.address) ?? 0n;
    this.nonces.set(from.address, nonce + 1n);
    return transfer(from, { nonce, to: BRIDGE_ADDRESS, value, data, gasLimit: gasLimit ?? bridgeGas(data) });
  }

  /** Gives the nonce back (a transaction that was refused and never included). */
  unuse(from: WalletKeys): void {
    this.nonces.set(from.address, this.nonces.get(from.address)! - 1n);
  }

  /** Imports a block of `txs` (admitted or not) and returns their receipts. */
  async block(txs: StandardTx[]): Promise<any[]> {
    const block = nextBlock(this.genesis, this.parent, txs);
    const { result, ref } = await importOk(this.node, block);
    this.last = block;
    // A block extending the head becomes the head: no forkchoiceUpdated needed.
    assert.is(result.canonical, true);
    this.parent = ref;
    return result.receipts;
  }

  slot(slot: Uint8Array): Uint8Array {
    return this.node.chain.headState().storage(BRIDGE_ADDRESS, slot);
  }
}

export const lockOp = (destination: Uint8Array, timeout = TIMEOUT, recipient = RECIPIENT): BridgeOperation => ({ op: BridgeOp.Lock, body: { destination, recipient: Buffer.from(recipient.slice(2), 'hex'), timeout } });
export const ALLOWANCE = 100n * TOKEN;
/** A registration of `g` on the chain `self`, signed by both of the fixture's validators (all its stake). */
export const registerOp = (g: Genesis, allowance = ALLOWANCE, self = SELF, signers = [0, 1]): BridgeOperation => {
  const terms = registrationTerms(self, g, genesisHash(g), allowance);
  return { op: BridgeOp.Register, body: { genesisJson: utf8(canonicalJson(g)), allowance, signatures: signers.map((i) => signRegistration(terms, i, keys.validators[i]!.mldsa, G.chain_id)) } };
};

/** A BID from X to this chain, with a proof of its lock in X's finalised state and a quorum of X's BID signatures. */
export function incoming(amount: bigint, o: { destination?: Uint8Array; signer?: typeof X } = {}): { fields: BidFields; op: BridgeOperation } {
  const fields: BidFields = { source: X.hash, destination: o.destination ?? SELF, lockTx: new Uint8Array(32).fill(Number(amount % 250n) + 1), sender: new Uint8Array(20).fill(0x5e), recipient: Buffer.from(RECIPIENT.slice(2), 'hex'), amount, timeout: TIMEOUT };
  const bid = bidId(fields);
  const proof = finalityProof(X, { storage: [[lockSlot(bid), stateWord(LockState.Locked)]], slot: lockSlot(bid), ...(o.signer ? { keys: o.signer.keys } : {}) });
  return { fields, op: { op: BridgeOp.Release, body: { bid: fields, proof, signatures: bidSignatures(X, fields) } } };
}

/** A release from `chain` to `destination` (default this chain) that `chain`'s own validators sign: honest, or forged by whoever holds its keys. */
export function releaseFrom(chain: typeof X, amount: bigint, seq: number, destination = SELF): BridgeOperation {
  const fields: BidFields = { source: chain.hash, destination, lockTx: new Uint8Array(32).fill(seq), sender: new Uint8Array(20).fill(0xee), recipient: Buffer.from(RECIPIENT.slice(2), 'hex'), amount, timeout: TIMEOUT };
  const proof = finalityProof(chain, { storage: [[lockSlot(bidId(fields)), stateWord(LockState.Locked)]], slot: lockSlot(bidId(fields)) });
  return { op: BridgeOp.Release, body: { bid: fields, proof, signatures: bidSignatures(chain, fields) } };
}

/** A proof from X (the destination of an outgoing BID) about its release slot. */
export function settleProof(fields: BidFields, released: boolean, atMs = fields.timeout * 1000) {
  const bid = bidId(fields);
  return finalityProof(X, { storage: released ? [[releaseSlot(bid), RELEASED_WORD]] : [], slot: releaseSlot(bid), timestampMs: atMs });
}

export const refused = async (h: Harness, tx: StandardTx, code: string, message?: RegExp) => {
  expectEnvelope(await submit(h.node, tx), 400, code, message);
};
