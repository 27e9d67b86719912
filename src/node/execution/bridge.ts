/**
 * The bridge operations in execution (docs/bridge.md): a transaction to BRIDGE_ADDRESS is judged
 * by the pure rules of src/core/bridge/verify.ts against a state view (the block's, or the head's
 * at admission) and, when valid, applied to the bridge account's balance and storage with one
 * receipt log. Counterparts' genesis documents (what a register carries) are kept here, keyed by
 * their hash: content-addressed, so a reorg needs no undo, since the state's counterpart slot,
 * not the document, says whether a chain is registered on a branch. Those this chain's genesis
 * lists are read from the genesis itself, never stored. The validator sets set updates move a
 * counterpart to are kept the same way, keyed by their commitment, which the state's set slot holds.
 */
import { type CounterpartView, type CounterpartsView } from '../../api/bridge.js';
import { isServerFault } from '../../api/errors.js';
import { bytesEqual, parseHex, toHex } from '../../core/codec/bytes.js';
import { BRIDGE_ADDRESS, HASH_BYTES } from '../../core/constants.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type Transaction, isAuthorization } from '../../core/types/transaction.js';
import { SvcError } from '../../core/errors.js';
import { ExecutionError } from './errors.js';
import { BRIDGE_OP_KIND, BridgeError, BridgeOp, type BridgeLogEvent, type BridgeOpKind, LockState, REGISTERED_WORD, RELEASED_WORD, bidId, bridgeLog, counterpartSlot, allowanceSlot, amountWord, committedSlot, escrowSlot, ledgerSlot, lockSlot, releaseSlot, setSlot, stateWord, wordAmount } from '../../core/bridge/types.js';
import { type BridgeOperation, decodeBridgeOp } from '../../core/bridge/ops.js';
import { type BridgeState, checkComplete, checkLock, checkRefund, checkRegister, checkRelease, checkSetUpdate, settledWord, unallocatedReserve } from '../../core/bridge/verify.js';
import { type HeldSet, activeStake, genesisHeldSet, heldSetCommitment, heldSetFromJson, heldSetToJson } from '../../core/bridge/set-update.js';
import type { RegistryView } from '../../core/bridge/registration.js';
import type { Registry } from './registry.js';
import { bridgeGas, isBridgeAddress } from '../../core/bridge/gas.js';
import type { ChainStore, WriteBatch } from '../shared/store.js';
import type { StateView } from './state/types.js';

/** Receipt kind of a transaction to BRIDGE_ADDRESS whose data names no operation. */
export const BRIDGE_MALFORMED_KIND = 'bridge_malformed' as const;
/** The `op` label values of service_execution_bridge_operations_total. */
export const BRIDGE_OP_NAMES = ['register', 'lock', 'release', 'refund', 'complete', 'update_set', 'malformed'] as const;
export type BridgeOpName = (typeof BRIDGE_OP_NAMES)[number];
/** Parsed counterpart documents kept in memory; the rest are read back from the database when a block names them. */
const DOC_CACHE_ENTRIES = 64;

/** Database keys: a counterpart's genesis document, and its summary for the counterparts view. */
const docKey = (hashHex: string) => `o:${hashHex}`;
const summaryKey = (hashHex: string) => `w:${hashHex}`;
const SUMMARY_PREFIX = 'w:';
/** A held validator set of a counterpart, by its commitment (set-update.ts). */
const setKey = (commitmentHex: string) => `q:${commitmentHex}`;

/** The terms of a transaction to BRIDGE_ADDRESS that the rules read. */
export interface BridgeTx {
  sender: string;
  /** 0x hash of the transaction (a lock's BID commits to it). */
  hash: string;
  value: bigint;
  data: Uint8Array;
}

/** What applying an operation did: the receipt's status, gas, kind, log or error. */
export interface BridgeOutcome {
  status: 0 | 1;
  gasUsed: bigint;
  kind: BridgeOpKind | typeof BRIDGE_MALFORMED_KIND;
  /** The one log of a successful operation (without its block position, which the receipt adds). */
  log?: { address: string; topics: string[]; data: string };
  /** `"<CODE>: message"` of a failed one. */
  error?: string;
}

/** The counterpart documents one block (or one admission) may read, and those its register operations add. */
export class BridgeDocs {
  /** Added by this block's registrations, written with its batch. */
  readonly added = new Map<string, Genesis>();
  /** Held sets this block's set updates moved to, by 0x commitment, written with its batch. */
  readonly addedSets = new Map<string, HeldSet>();

  constructor(
    private readonly loaded: ReadonlyMap<string, Genesis>,
    private readonly loadedSets: ReadonlyMap<string, HeldSet> = new Map(),
  ) {}

  /** A document by 0x hash: added in this block, or loaded for it. */
  get(hashHex: string): Genesis | undefined {
    return this.added.get(hashHex) ?? this.loaded.get(hashHex);
  }

  /** A held set by 0x commitment: added in this block, or loaded for it. */
  set(commitmentHex: string): HeldSet | undefined {
    return this.addedSets.get(commitmentHex) ?? this.loadedSets.get(commitmentHex);
  }

  /** Queues the documents and sets this block added (content-addressed: rewriting one is harmless). */
  queue(batch: WriteBatch): void {
    for (const [h, g] of this.added) batch.put(docKey(h), g).put(summaryKey(h), counterpartView(g, h));
    for (const [c, s] of this.addedSets) batch.put(setKey(c), heldSetToJson(s));
  }
}

/** The CounterpartView of a genesis document. */
export function counterpartView(g: Genesis, hashHex: string): CounterpartView {
  return {
    chain_id: g.chain_id,
    genesis_hash: hashHex,
    validators: g.validators.length,
    active_stake: g.validators.reduce((s, v) => s + BigInt(v.stake), 0n).toString(),
    slots_per_epoch: g.config.slots_per_epoch,
    slot_seconds: g.config.slot_seconds,
  };
}

// The counterpart each operation's rules look up (lock and settlements: the destination; release: the source).
function namedCounterpart(o: BridgeOperation): Uint8Array | undefined {
  switch (o.op) {
    case BridgeOp.Register:
      // Judged against the counterpart slot (checkRegister): no stored document is read.
      return undefined;
    case BridgeOp.Lock:
      return o.body.destination;
    case BridgeOp.Release:
      return o.body.bid.source;
    case BridgeOp.Refund:
    case BridgeOp.Complete:
      return o.body.bid.destination;
    case BridgeOp.UpdateSet:
      return o.body.counterpart;
  }
}

// The rules throw typed errors; anything else a payload provokes (say, from a codec) is its fault
// too, and the same on every node, so it fails the transaction rather than the block.
function asRefusal(err: unknown): SvcError {
  return err instanceof SvcError ? err : new BridgeError('BRIDGE_MALFORMED', (err as Error).message);
}

/** The data of a block's transactions to BRIDGE_ADDRESS (what BridgeExecution.prepare reads). */
export function bridgeData(txs: readonly Transaction[]): Uint8Array[] {
  return txs.flatMap((tx) => (!isAuthorization(tx) && isBridgeAddress(tx.to) ? [tx.data] : []));
}

/** The receipt kind of a transaction to BRIDGE_ADDRESS. */
export function bridgeKind(data: Uint8Array): BridgeOpKind | typeof BRIDGE_MALFORMED_KIND {
  return (BRIDGE_OP_KIND as Record<number, BridgeOpKind | undefined>)[data[0] ?? 0] ?? BRIDGE_MALFORMED_KIND;
}

function opName(op: number): BridgeOpName {
  const kind = (BRIDGE_OP_KIND as Record<number, string | undefined>)[op];
  return kind ? (kind.slice('bridge_'.length) as BridgeOpName) : 'malformed';
}

// Adds `delta` to a uint256 bridge word. An escrow or ledger never goes below zero by the rules;
// the floor keeps a lock made before ledgers existed settleable rather than stuck.
function add(view: StateView, slot: Uint8Array, delta: bigint): void {
  const next = wordAmount(view.storage(BRIDGE_ADDRESS, slot)) + delta;
  view.setStorage(BRIDGE_ADDRESS, slot, amountWord(next < 0n ? 0n : next));
}

/** The bridge in one execution node: counterpart documents and the operations' judgement and effects. */
export class BridgeExecution {
  private readonly cache = new Map<string, Genesis>();
  /** Held sets by 0x commitment, least recently used first. */
  private readonly setCache = new Map<string, HeldSet>();
  /** The genesis counterparts' documents by 0x hash: part of this chain's genesis, so always at hand. */
  private readonly fromGenesis: ReadonlyMap<string, Genesis>;
  private readonly self: Uint8Array;
  /** Counts every operation a block applied (service_execution_bridge_operations_total). */
  onOperation: (op: BridgeOpName, ok: boolean) => void = () => {};

  private readonly registryView: RegistryView;

  constructor(
    private readonly store: ChainStore,
    readonly genesis: Genesis,
    readonly genesisHash: string,
    registry: Registry,
  ) {
    this.self = parseHex(genesisHash, 'genesis hash', HASH_BYTES);
    this.fromGenesis = new Map((genesis.bridge_counterparts ?? []).map((c) => [c.genesis_hash, c.genesis]));
    // Execution's own registry at the head, as slashing evidence is judged: never the beacon's word.
    this.registryView = {
      chainId: genesis.chain_id,
      validator: (index) => {
        const e = registry.all()[index];
        return e && { stake: BigInt(e.stake), active: e.active, slashed: e.slashed, publicKey: () => registry.publicKey(e) };
      },
      activeStake: () => registry.all().reduce((sum, e) => (e.active && !e.slashed ? sum + BigInt(e.stake) : sum), 0n),
    };
  }

  /**
   * Loads the counterpart documents the bridge operations among `datas` name, and the sets `view`
   * holds for them, so the synchronous rules can read them: one database read per document or set
   * not cached, none for other transactions.
   */
  async prepare(datas: readonly Uint8Array[], view: StateView): Promise<BridgeDocs> {
    const loaded = new Map<string, Genesis>();
    const sets = new Map<string, HeldSet>();
    for (const data of datas) {
      let named: Uint8Array | undefined;
      try {
        named = namedCounterpart(decodeBridgeOp(data));
      } catch {
        continue;
      }
      if (!named) continue;
      const h = toHex(named);
      if (loaded.has(h)) continue;
      const held = await this.heldSet(view, named);
      if (held) sets.set(held.commitment, held.set);
      const known = this.fromGenesis.get(h);
      if (known) {
        loaded.set(h, known);
        continue;
      }
      let g = this.cache.get(h);
      if (g) {
        // Least recently used first: a hit moves to the back.
        this.cache.delete(h);
      } else {
        g = await this.store.get<Genesis>(docKey(h));
        if (!g) continue;
      }
      this.remember(h, g);
      loaded.set(h, g);
    }
    return new BridgeDocs(loaded, sets);
  }

  // The set `view` holds for counterpart `h`, when a set update moved it from the genesis set.
  private async heldSet(view: StateView, h: Uint8Array): Promise<{ commitment: string; set: HeldSet } | undefined> {
    const word = view.storage(BRIDGE_ADDRESS, setSlot(h));
    if (word.every((b) => b === 0)) return undefined;
    const commitment = toHex(word);
    let set = this.setCache.get(commitment);
    if (set) {
      this.setCache.delete(commitment);
    } else {
      const stored = await this.store.get<unknown>(setKey(commitment));
      // The slot is only ever set in the same block that stores the set.
      if (stored === undefined) throw new ExecutionError('CORRUPT_DB', `counterpart ${toHex(h)} holds set ${commitment} but the set is not stored`);
      set = heldSetFromJson(stored, setKey(commitment));
    }
    this.rememberSet(commitment, set);
    return { commitment, set };
  }

  private rememberSet(commitment: string, set: HeldSet): void {
    this.setCache.set(commitment, set);
    if (this.setCache.size > DOC_CACHE_ENTRIES) this.setCache.delete(this.setCache.keys().next().value!);
  }

  private remember(h: string, g: Genesis): void {
    this.cache.set(h, g);
    if (this.cache.size > DOC_CACHE_ENTRIES) this.cache.delete(this.cache.keys().next().value!);
  }

  /** Caches the documents and sets a block added, once its batch is written. */
  committed(docs: BridgeDocs): void {
    for (const [h, g] of docs.added) this.remember(h, g);
    for (const [c, s] of docs.addedSets) this.rememberSet(c, s);
  }

  /** The rules' view of `view` at `timestampMs`. */
  private bridgeState(view: StateView, docs: BridgeDocs, timestampMs: number): BridgeState {
    return {
      self: this.self,
      timestampMs,
      counterpart: (h) => {
        if (!bytesEqual(view.storage(BRIDGE_ADDRESS, counterpartSlot(h)), REGISTERED_WORD)) return undefined;
        const g = docs.get(toHex(h));
        // The slot is only ever set in the same block that adds the document.
        if (!g) throw new ExecutionError('CORRUPT_DB', `counterpart ${toHex(h)} is registered but its genesis document is not stored`);
        return g;
      },
      counterpartSet: (h, g) => {
        const word = view.storage(BRIDGE_ADDRESS, setSlot(h));
        if (word.every((b) => b === 0)) return genesisHeldSet(g, h);
        const set = docs.set(toHex(word));
        if (!set) throw new ExecutionError('CORRUPT_DB', `counterpart ${toHex(h)} holds set ${toHex(word)} but the set is not loaded`);
        return set;
      },
      storage: (slot) => view.storage(BRIDGE_ADDRESS, slot),
      balance: () => view.account(BRIDGE_ADDRESS).balance,
      registry: this.registryView,
    };
  }

  /**
   * Judges an operation without applying it; returns what applying it would do to the state, and
   * throws the BridgeError (or MalformedError, for data that decodes to no operation) otherwise.
   */
  judge(tx: BridgeTx, view: StateView, docs: BridgeDocs, timestampMs: number): { op: BridgeOperation; apply: () => BridgeLogEvent } {
    const o = decodeBridgeOp(tx.data);
    if (o.op !== BridgeOp.Lock && tx.value !== 0n) throw new BridgeError('BRIDGE_MALFORMED', `a ${BRIDGE_OP_KIND[o.op]} carries no value (got ${tx.value} wei)`);
    const ctx = this.bridgeState(view, docs, timestampMs);
    const bridge = BRIDGE_ADDRESS;
    switch (o.op) {
      case BridgeOp.Register: {
        const { genesis, hash } = checkRegister(o.body, ctx);
        const allowance = o.body.allowance;
        return {
          op: o,
          apply: () => {
            docs.added.set(toHex(hash), genesis);
            view.setStorage(bridge, counterpartSlot(hash), REGISTERED_WORD);
            view.setStorage(bridge, ledgerSlot(hash), amountWord(allowance));
            view.setStorage(bridge, allowanceSlot(hash), amountWord(allowance));
            add(view, committedSlot(), allowance);
            return { event: 'Registered', genesisHash: hash, chainId: genesis.chain_id };
          },
        };
      }
      case BridgeOp.Lock: {
        const f = checkLock(o.body, { sender: parseHex(tx.sender, 'sender', 20), txHash: parseHex(tx.hash, 'hash', HASH_BYTES), amount: tx.value }, ctx);
        return {
          op: o,
          apply: () => {
            const bid = bidId(f);
            view.addBalance(tx.sender, -tx.value);
            view.addBalance(bridge, tx.value);
            view.setStorage(bridge, lockSlot(bid), stateWord(LockState.Locked));
            add(view, escrowSlot(f.destination), tx.value);
            add(view, committedSlot(), tx.value);
            return { event: 'Locked', bid, fields: f };
          },
        };
      }
      case BridgeOp.Release: {
        const bid = checkRelease(o.body, ctx);
        const f = o.body.bid;
        return {
          op: o,
          apply: () => {
            view.addBalance(bridge, -f.amount);
            view.addBalance(toHex(f.recipient), f.amount);
            view.setStorage(bridge, releaseSlot(bid), RELEASED_WORD);
            add(view, ledgerSlot(f.source), -f.amount);
            add(view, committedSlot(), -f.amount);
            return { event: 'Released', bid, fields: f };
          },
        };
      }
      case BridgeOp.Refund:
      case BridgeOp.Complete: {
        const refund = o.op === BridgeOp.Refund;
        const bid = refund ? checkRefund(o.body, ctx) : checkComplete(o.body, ctx);
        const f = o.body.bid;
        return {
          op: o,
          apply: () => {
            // The escrow pays a refund; a completion makes the amount the destination's liquidity here.
            add(view, escrowSlot(f.destination), -f.amount);
            if (refund) {
              view.addBalance(bridge, -f.amount);
              view.addBalance(toHex(f.sender), f.amount);
              add(view, committedSlot(), -f.amount);
            } else {
              add(view, ledgerSlot(f.destination), f.amount);
            }
            view.setStorage(bridge, lockSlot(bid), settledWord(o.op));
            return { event: refund ? 'Refunded' : 'Completed', bid, fields: f };
          },
        };
      }
      case BridgeOp.UpdateSet: {
        const { next } = checkSetUpdate(o.body, ctx);
        const h = o.body.counterpart;
        return {
          op: o,
          apply: () => {
            const commitment = heldSetCommitment(next);
            docs.addedSets.set(toHex(commitment), next);
            view.setStorage(bridge, setSlot(h), commitment);
            return { event: 'SetUpdated', genesisHash: h, commitment, epoch: next.epoch };
          },
        };
      }
    }
  }

  /**
   * Applies an operation in a block: judged, then applied, or a status-0 outcome naming the rule
   * it breaks (nothing written). Gas is bridgeGas(data) either way; the fee is the caller's.
   */
  execute(tx: BridgeTx, view: StateView, docs: BridgeDocs, timestampMs: number): BridgeOutcome {
    const gasUsed = bridgeGas(tx.data);
    const code = tx.data[0] ?? 0;
    const kind = bridgeKind(tx.data);
    try {
      const event = this.judge(tx, view, docs, timestampMs).apply();
      const log = bridgeLog(event);
      this.onOperation(opName(code), true);
      return { status: 1, gasUsed, kind, log: { address: BRIDGE_ADDRESS, topics: log.topics.map((t) => toHex(t)), data: toHex(log.data) } };
    } catch (err) {
      // A database fault is the node's, not the transaction's: the block is not imported.
      if (err instanceof SvcError && isServerFault(err)) throw err;
      this.onOperation(opName(code), false);
      const e = asRefusal(err);
      return { status: 0, gasUsed, kind, error: `${e.code}: ${e.message}` };
    }
  }

  /** Admission: refuses an operation that would fail against the head state now (its BridgeError, or MalformedError). */
  async admit(tx: BridgeTx, head: () => StateView): Promise<void> {
    const view = head();
    const docs = await this.prepare([tx.data], view);
    try {
      this.judge(tx, view, docs, Date.now());
    } catch (err) {
      if (err instanceof SvcError && isServerFault(err)) throw err;
      throw asRefusal(err);
    }
  }

  /** This chain and the counterparts known in `head`, from its genesis or registered (GET /api/v1/bridge/counterparts). */
  async counterparts(head: StateView): Promise<CounterpartsView> {
    // Every document ever registered on any branch; the state says which are registered on this one.
    const stored = (await this.store.scan<CounterpartView>(SUMMARY_PREFIX)).map((e) => e.value).filter((c) => !this.fromGenesis.has(c.genesis_hash));
    const genesisOnes = [...this.fromGenesis].map(([h, g]): CounterpartView => ({ ...counterpartView(g, h), source: 'genesis' }));
    const word = (slot: Uint8Array) => wordAmount(head.storage(BRIDGE_ADDRESS, slot)).toString();
    const counterparts = [...genesisOnes, ...stored.map((c): CounterpartView => ({ ...c, source: 'registration' }))]
      .filter((c) => bytesEqual(head.storage(BRIDGE_ADDRESS, counterpartSlot(parseHex(c.genesis_hash, 'genesis_hash', HASH_BYTES))), REGISTERED_WORD))
      .sort((a, b) => a.chain_id.localeCompare(b.chain_id) || a.genesis_hash.localeCompare(b.genesis_hash));
    const views: CounterpartView[] = [];
    for (const c of counterparts) {
      const h = parseHex(c.genesis_hash, 'genesis_hash', HASH_BYTES);
      const held = await this.heldSet(head, h);
      const set = held ? { validators: held.set.validators.size, active_stake: activeStake(held.set.validators).toString(), set_epoch: held.set.epoch } : { set_epoch: 0 };
      views.push({ ...c, ...set, ledger: { allowance: word(allowanceSlot(h)), available: word(ledgerSlot(h)), escrow: word(escrowSlot(h)) } });
    }
    const ctx = this.bridgeState(head, new BridgeDocs(new Map()), Date.now());
    const reserve = { balance: ctx.balance().toString(), unallocated: unallocatedReserve(ctx).toString() };
    return { self: { chain_id: this.genesis.chain_id, genesis_hash: this.genesisHash }, reserve, counterparts: views };
  }
}
