/**
 * The beacon's bridge state machine (docs/bridge.md "States and transitions"): one record per BID
 * this chain is party to, fed by the receipts of every imported block (API, gossip and sync all
 * go through BeaconChain.propose), by finality, by the slot clock and by validators' BID
 * signatures. Every transition is appended to the BID's history, written atomically and synced
 * before anything is announced on `/ws` or a signature POST is acknowledged.
 *
 * Storage keys: records.ts; the listings' and signatures' reads: queries.ts; the
 * signed stake and the served view: view.ts.
 * Each query walks only the keys of its answer; finality and expiry walk only the entries they
 * settle; nothing is held in memory beyond the counts and the counterpart names, so a restart
 * reloads everything from here.
 */
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../../core/constants.js';
import { BRIDGE_OP_KIND, type BidFields, type BidSignature, BridgeError, bidFieldsToJson, parseBridgeLog, verifyBidSignature } from '../../../core/bridge/types.js';
import { BeaconError } from '../errors.js';
import { type Genesis, genesisHash } from '../../../core/genesis/genesis.js';
import type { Receipt, RegistryEntry } from '../../../api/execution.js';
import { BID_STATUSES, type BidDirection, type BidSignatureJson, type BidSignatureResult, type BidStatus, type BidTransitionJson, type BidView, type BridgeChainJson, type CounterpartsView } from '../../../api/bridge.js';
import type { Logger } from '../../../util/log.js';
import { Mutex } from '../../../util/mutex.js';
import { type ChainStore, WriteBatch } from '../../shared/store.js';
import type { EventHub } from '../events.js';
import type { BeaconMetrics } from '../metrics.js';
import { RegistrationRequests } from './registrations.js';
import { HeldSignatures } from './gossip.js';
import { type BidQuery, listBids, readSignatures } from './queries.js';
import { type BidRecord, type Cause, Change, DIRECTIONS, K, pad, SETTLED } from './records.js';
import { bidStake, bidView } from './view.js';

/** Most BIDs one slot tick expires (the rest wait for the next tick: the batch stays small). */
const EXPIRE_PER_TICK = 1_000;
/** Receipt kinds of the five bridge operations. */
const BRIDGE_KINDS: ReadonlySet<string> = new Set(Object.values(BRIDGE_OP_KIND));

/** Whether a receipt with this outcome is one the bridge applies (a successful bridge operation). */
export function isBridgeOutcome(o: Pick<Receipt, 'status' | 'kind'>): boolean {
  return o.status === 1 && BRIDGE_KINDS.has(o.kind);
}

/** A block as the finality walk needs it (the beacon's block records). */
export interface BridgeBlockRef {
  root: string;
  parent: string;
  index: number;
}

/** What the chain gives the bridge. */
export interface BridgeContext {
  genesis: Genesis;
  store: ChainStore;
  metrics: BeaconMetrics;
  log: Logger;
  /** Where transitions are announced (the /ws hub). */
  events?: Pick<EventHub, 'publish'> | undefined;
  /** The validator registry (execution's, as the beacon last read it). */
  registry: () => readonly RegistryEntry[];
  /** Execution's view of the registered counterparts (GET /api/v1/bridge/counterparts). */
  counterparts: () => Promise<CounterpartsView>;
  /** A block the beacon holds, by root. */
  block: (root: string) => BridgeBlockRef | undefined;
  /** Unix ms. */
  now: () => number;
  currentSlot: () => number;
}

/** The chain ids of the counterparts, by genesis hash, as execution last named them. */
type ChainNames = Map<string, string>;

/** The BID store and state machine of one beacon. */
export class BridgeStore {
  private readonly mutex = new Mutex();
  private counts = new Map<string, number>();
  private seq = 0;
  private names: ChainNames | undefined;
  private readonly self: BridgeChainJson;
  /** Gossiped signatures whose BID this beacon has not registered yet. */
  private readonly held = new HeldSignatures();
  /** Called with each signature added other than by gossip (the network publishes it). */
  onNew: ((bid: string, s: BidSignature) => void) | undefined;
  /** Counterpart registration requests this beacon gathers validators' signatures for. */
  readonly registrations: RegistrationRequests;

  private constructor(private readonly c: BridgeContext) {
    this.self = { chain_id: c.genesis.chain_id, genesis_hash: toHex(genesisHash(c.genesis)) };
    this.registrations = new RegistrationRequests(c.genesis, c.registry);
  }

  /** Opens the store: the counts and the last sequence number are all it reads. */
  static async open(c: BridgeContext): Promise<BridgeStore> {
    const s = new BridgeStore(c);
    const counts = await c.store.get<Record<string, number>>(K.counts);
    s.counts = new Map(Object.entries(counts ?? {}));
    for await (const key of c.store.db.keys({ gte: 'Xn:', lt: 'Xn:\xff', reverse: true, limit: 1 })) s.seq = Number(String(key).slice(3));
    s.publishCounts();
    return s;
  }

  /** This chain as BIDs name it. */
  get chain(): BridgeChainJson {
    return this.self;
  }

  // -------------------------------------------------------------------------------------------
  // Inputs

  /**
   * Applies the bridge receipts of an imported block (status 1, kind bridge_*, their log from
   * BRIDGE_ADDRESS). Its writes join `batch`, which `write` commits (the chain's block write,
   * so the block and what it did to BIDs land together); events go out after it. A failure to
   * read the store is logged and the block is written without them: the block is already valid.
   */
  importBlock(receipts: readonly Receipt[], block: { hash: string; index: number }, batch = new WriteBatch(), write: (b: WriteBatch) => Promise<void> = (b) => this.c.store.write(b)): Promise<void> {
    return this.mutex.run(async () => {
      const bridgeReceipts = receipts.filter(isBridgeOutcome);
      if (bridgeReceipts.length === 0) return write(batch);
      const ch = new Change(this.counts);
      try {
        for (const r of bridgeReceipts) await this.applyReceipt(ch, r, block);
      } catch (err) {
        this.c.log.error('bridge receipts of a block could not be applied; the block is stored without them', { block: block.hash, error: (err as Error).message });
        return write(batch);
      }
      await this.commit(ch, write, batch);
    });
  }

  private async applyReceipt(ch: Change, r: Receipt, block: { hash: string; index: number }): Promise<void> {
    for (const log of r.logs) {
      if (log.address.toLowerCase() !== BRIDGE_ADDRESS) continue;
      let e;
      try {
        e = parseBridgeLog(log.topics, log.data);
      } catch (err) {
        this.c.log.warn('unreadable bridge log ignored', { tx: r.transactionHash, error: (err as Error).message });
        continue;
      }
      if (!e) continue;
      const cause = { block_hash: block.hash, tx_hash: r.transactionHash };
      switch (e.event) {
        case 'Registered':
          ch.registered = true;
          break;
        case 'Locked':
          await this.onLocked(ch, toHex(e.bid), e.fields, block, cause);
          break;
        case 'Released':
          await this.onReleased(ch, toHex(e.bid), e.fields, block, cause);
          break;
        case 'Completed':
        case 'Refunded':
          await this.onSettled(ch, toHex(e.bid), e.event === 'Completed' ? 'COMPLETED' : 'REFUNDED', cause);
          break;
      }
    }
  }

  private async onLocked(ch: Change, bid: string, f: BidFields, block: { hash: string; index: number }, cause: Cause): Promise<void> {
    if (toHex(f.source) !== this.self.genesis_hash) {
      this.c.log.warn('lock log naming another source chain ignored', { bid, source: toHex(f.source) });
      return;
    }
    const known = await this.get(ch, bid);
    if (known) {
      if (known.direction === 'outgoing') this.addBlock(ch, known, block);
      return;
    }
    const r = this.newRecord(bid, 'outgoing', f, block, { chain_id: await this.nameOf(toHex(f.destination)), genesis_hash: toHex(f.destination) }, this.self);
    r.history.push(this.entry('PENDING', cause));
    this.create(ch, r);
    ch.batch.put(K.expiry(f.timeout, bid), bid).put(K.unfinal(block.index, bid), bid);
    ch.announce.push({ kind: 'registered', record: r });
    const held = this.held.take(bid);
    if (held) for (const [v, signature] of held) this.sign(ch, r, { validatorIndex: v, signature });
  }

  private async onReleased(ch: Change, bid: string, f: BidFields, block: { hash: string; index: number }, cause: Cause): Promise<void> {
    if (toHex(f.destination) !== this.self.genesis_hash) {
      this.c.log.warn('release log naming another destination chain ignored', { bid, destination: toHex(f.destination) });
      return;
    }
    const known = await this.get(ch, bid);
    if (known) {
      if (known.direction === 'incoming') this.addBlock(ch, known, block);
      return;
    }
    const r = this.newRecord(bid, 'incoming', f, block, this.self, { chain_id: await this.nameOf(toHex(f.source)), genesis_hash: toHex(f.source) });
    r.history.push(this.entry('COMPLETED', cause));
    this.create(ch, r);
    ch.announce.push({ kind: 'status', record: r, status: r.status, previous: null });
  }

  // The chain's receipt is the authority: a refund is taken from any open state, since this
  // beacon's clock may not have expired the BID yet when it imports the block (sync, skew).
  private async onSettled(ch: Change, bid: string, status: 'COMPLETED' | 'REFUNDED', cause: Cause): Promise<void> {
    const r = await this.get(ch, bid);
    if (!r || r.direction !== 'outgoing') {
      this.c.log.warn(`${status.toLowerCase()} log for a BID this beacon never registered ignored`, { bid });
      return;
    }
    if (SETTLED.has(r.status)) return;
    if (status === 'COMPLETED') {
      const fin = r.history.find((t) => t.status === 'FINALIZED');
      if (fin) ch.latencies.push(Math.max(0, (this.c.now() - Date.parse(fin.at)) / 1000));
    }
    this.transition(ch, r, status, cause);
  }

  /**
   * Finality moved to `root`: every outgoing BID whose lock block is an ancestor of it and below
   * it is final (ATTESTED ones become FINALIZED); a lock block below it that is not an ancestor
   * was on a branch finality abandoned, and leaves the queue. Walks only the newly final range.
   */
  onFinalized(root: string): Promise<void> {
    return this.mutex.run(async () => {
      const fin = this.c.block(root);
      if (!fin || fin.index === 0) return;
      const entries: Array<{ key: string; index: number; bid: string }> = [];
      for await (const key of this.c.store.db.keys({ gte: 'Xf:', lt: K.unfinal(fin.index, '') })) {
        const k = String(key);
        entries.push({ key: k, index: Number(k.slice(3, 19)), bid: k.slice(20) });
      }
      if (entries.length === 0) return;
      const lowest = Math.min(...entries.map((e) => e.index));
      const ancestors = new Set<string>();
      for (let b = this.c.block(fin.parent); b && b.index >= lowest; b = this.c.block(b.parent)) ancestors.add(b.root);
      const ch = new Change(this.counts);
      for (const e of entries) {
        ch.batch.del(e.key);
        const r = await this.get(ch, e.bid);
        if (!r || r.finalized) continue;
        const final = r.blocks.find((b) => b.index === e.index && ancestors.has(b.hash));
        if (!final) continue;
        r.finalized = true;
        r.blocks = [final, ...r.blocks.filter((b) => b !== final)];
        for (const b of r.blocks) ch.batch.del(K.unfinal(b.index, r.bid));
        this.touch(ch, r);
        if (r.status === 'ATTESTED') this.transition(ch, r, 'FINALIZED', null);
      }
      await this.commit(ch);
    });
  }

  /** The slot clock: open outgoing BIDs whose timeout has passed become EXPIRED. */
  onSlot(): Promise<void> {
    return this.mutex.run(async () => {
      const nowSeconds = Math.floor(this.c.now() / 1000);
      const ch = new Change(this.counts);
      let n = 0;
      for await (const key of this.c.store.db.keys({ gte: 'Xe:', lt: `Xe:${pad(nowSeconds + 1, 16)}`, limit: EXPIRE_PER_TICK })) {
        const k = String(key);
        ch.batch.del(k);
        const r = await this.get(ch, k.slice(20));
        if (r && !SETTLED.has(r.status) && r.status !== 'EXPIRED') this.transition(ch, r, 'EXPIRED', null);
        n++;
      }
      if (n > 0) await this.commit(ch);
    });
  }

  /**
   * A validator's signature over an outgoing BID. Checked against the registry (active, not
   * slashed) and this chain's id, stored and synced before it is acknowledged; at 2/3 of the
   * active stake the BID is ATTESTED (and FINALIZED when its lock already is final).
   */
  async addSignature(bid: string, s: BidSignature, source: 'api' | 'gossip' = 'api'): Promise<{ added: boolean; result: BidSignatureResult }> {
    const pre = await this.c.store.get<BidRecord>(K.bid(bid));
    if (!pre) throw new BeaconError('UNKNOWN_BID', `no BID ${bid}`);
    if (pre.direction !== 'outgoing') throw new BridgeError('BRIDGE_WRONG_SOURCE', `BID ${bid} is incoming: its signatures are collected by the source chain's beacon (${pre.source.chain_id})`);
    const stored = pre.signers.includes(s.validatorIndex) ? await this.c.store.get<string>(K.sig(bid, s.validatorIndex)) : undefined;
    // Checked outside the lock: verification is the slow part and reads nothing the lock guards.
    if (stored === undefined || stored !== toHex(s.signature)) this.verify(bid, s);
    return this.mutex.run(async () => {
      const ch = new Change(this.counts);
      const r = (await this.get(ch, bid))!;
      const added = this.sign(ch, r, s);
      if (added) await this.commit(ch);
      if (added && source !== 'gossip') this.onNew?.(bid, s);
      const { signed, active } = bidStake(this.c.registry(), r.signers);
      return { added, result: { bid, added, status: r.status, signers: r.signers.length, signed_stake: signed.toString(), active_stake: active.toString() } };
    });
  }

  /**
   * A signature from gossip: added like a POSTed one when the BID is registered here; verified
   * and held (bounded) when it is not yet, since the signature may outrun the lock's block.
   */
  async gossipSignature(bid: string, s: BidSignature): Promise<'added' | 'known' | 'held'> {
    if (await this.c.store.get<BidRecord>(K.bid(bid))) return (await this.addSignature(bid, s, 'gossip')).added ? 'added' : 'known';
    this.verify(bid, s);
    return this.mutex.run(async () => {
      // Registered while it was verified: the lock path did not see it.
      if (await this.c.store.get<BidRecord>(K.bid(bid))) return (await this.addSignatureLocked(bid, s)) ? 'added' : 'known';
      this.held.hold(bid, s);
      return 'held';
    });
  }

  private async addSignatureLocked(bid: string, s: BidSignature): Promise<boolean> {
    const ch = new Change(this.counts);
    const r = (await this.get(ch, bid))!;
    if (r.direction !== 'outgoing' || !this.sign(ch, r, s)) return false;
    await this.commit(ch);
    return true;
  }

  // The signer must be an active, unslashed validator and the signature must verify under this chain's id.
  private verify(bid: string, s: BidSignature): void {
    const v = this.c.registry()[s.validatorIndex];
    if (!v || !v.active || v.slashed) throw new BridgeError('BRIDGE_UNKNOWN_SIGNER', `validator ${s.validatorIndex} is not an active validator of this chain`);
    if (!verifyBidSignature(parseHex(bid, 'bid', 32), s, parseHex(v.public_key, 'public_key'), this.c.genesis.chain_id)) {
      throw new BridgeError('BRIDGE_BAD_SIGNATURE', `the signature of validator ${s.validatorIndex} does not verify over BID ${bid} (domain svc/bridge-bid/v1, chain ${this.c.genesis.chain_id})`);
    }
  }

  // Adds a verified signature to the record; at 2/3 of the active stake a PENDING BID is ATTESTED
  // (and FINALIZED at once when its lock is already final). False when the signer had signed.
  private sign(ch: Change, r: BidRecord, s: BidSignature): boolean {
    if (r.signers.includes(s.validatorIndex)) return false;
    r.signers = [...r.signers, s.validatorIndex].sort((a, b) => a - b);
    ch.batch.put(K.sig(r.bid, s.validatorIndex), toHex(s.signature));
    this.touch(ch, r);
    const { signed, active } = bidStake(this.c.registry(), r.signers);
    if (r.status === 'PENDING' && active > 0n && 3n * signed >= 2n * active) {
      this.transition(ch, r, 'ATTESTED', null);
      if (r.finalized) this.transition(ch, r, 'FINALIZED', null);
    }
    return true;
  }

  // -------------------------------------------------------------------------------------------
  // Queries

  /** One BID, or undefined. */
  async bid(bid: string): Promise<BidView | undefined> {
    const r = await this.c.store.get<BidRecord>(K.bid(bid));
    return r && bidView(r, this.c.registry(), this.names);
  }

  /** BIDs newest first, filtered; reads only the index entries of the answer. */
  async list(q: BidQuery): Promise<BidView[]> {
    return (await listBids(this.c.store, q)).map((r) => bidView(r, this.c.registry(), this.names));
  }

  /** The BID signatures collected for a BID, by validator index; undefined for an unknown BID. */
  signatures(bid: string): Promise<BidSignatureJson[] | undefined> {
    return readSignatures(this.c.store, bid);
  }

  /** This chain and its counterparts with their ledgers, as execution reports them now. */
  async counterparts(): Promise<CounterpartsView> {
    // Asked afresh: the ledgers it carries move with every bridge operation (only the names are kept).
    const view = await this.c.counterparts();
    this.names = new Map(view.counterparts.map((c) => [c.genesis_hash.toLowerCase(), c.chain_id]));
    return view;
  }

  // -------------------------------------------------------------------------------------------
  // Internals

  private async nameOf(genesisHashHex: string): Promise<string> {
    const cached = this.names?.get(genesisHashHex);
    if (cached !== undefined) return cached;
    try {
      await this.counterparts();
      const name = this.names?.get(genesisHashHex);
      if (name !== undefined) return name;
    } catch (err) {
      this.c.log.warn('cannot read the counterparts from execution; the BID names the chain by genesis hash', { genesis_hash: genesisHashHex, error: (err as Error).message });
    }
    return genesisHashHex;
  }

  private newRecord(bid: string, direction: BidDirection, f: BidFields, block: { hash: string; index: number }, destination: BridgeChainJson, source: BridgeChainJson): BidRecord {
    return { bid, direction, status: direction === 'outgoing' ? 'PENDING' : 'COMPLETED', fields: bidFieldsToJson(f), source, destination, blocks: [{ ...block }], finalized: false, signers: [], seq: ++this.seq, history: [] };
  }

  private create(ch: Change, r: BidRecord): void {
    ch.batch.put(K.order(r.seq), r.bid).put(K.status(r.direction, r.status, r.seq), r.bid).put(K.address(r.fields.sender, r.seq), r.bid);
    if (r.fields.recipient !== r.fields.sender) ch.batch.put(K.address(r.fields.recipient, r.seq), r.bid);
    ch.count(r.direction, r.status, 1);
    this.touch(ch, r);
  }

  private addBlock(ch: Change, r: BidRecord, block: { hash: string; index: number }): void {
    if (r.blocks.some((b) => b.hash === block.hash)) return;
    r.blocks.push({ ...block });
    if (r.direction === 'outgoing' && !r.finalized) ch.batch.put(K.unfinal(block.index, r.bid), r.bid);
    this.touch(ch, r);
  }

  private entry(status: BidStatus, cause: Cause | null): BidTransitionJson {
    const now = this.c.now();
    return { status, at: new Date(now).toISOString(), slot: this.c.currentSlot(), block_hash: cause?.block_hash ?? null, tx_hash: cause?.tx_hash ?? null };
  }

  private transition(ch: Change, r: BidRecord, status: BidStatus, cause: Cause | null): void {
    const previous = r.status;
    ch.batch.del(K.status(r.direction, previous, r.seq)).put(K.status(r.direction, status, r.seq), r.bid);
    ch.count(r.direction, previous, -1);
    ch.count(r.direction, status, 1);
    r.status = status;
    r.history.push(this.entry(status, cause));
    if (r.direction === 'outgoing' && (SETTLED.has(status) || status === 'EXPIRED')) ch.batch.del(K.expiry(r.fields.timeout, r.bid));
    this.touch(ch, r);
    ch.announce.push({ kind: 'status', record: r, status, previous });
  }

  private touch(ch: Change, r: BidRecord): void {
    ch.touched.set(r.bid, r);
  }

  private async get(ch: Change, bid: string): Promise<BidRecord | undefined> {
    return ch.touched.get(bid) ?? (await this.c.store.get<BidRecord>(K.bid(bid)));
  }

  // Durable first: counts, metrics and events follow the synced write.
  private async commit(ch: Change, write: (b: WriteBatch) => Promise<void> = (b) => this.c.store.write(b), base = new WriteBatch()): Promise<void> {
    // Records are put last, so the final state of a record touched twice wins.
    for (const r of ch.touched.values()) ch.batch.put(K.bid(r.bid), r);
    ch.batch.put(K.counts, Object.fromEntries(ch.counts));
    base.ops.push(...ch.batch.ops);
    await write(base);
    this.counts = ch.counts;
    if (ch.registered) this.names = undefined;
    this.publishCounts();
    for (const s of ch.latencies) this.c.metrics.bridgeRelayLatency.observe(s);
    for (const a of ch.announce) {
      const r = a.record;
      if (a.kind === 'registered') {
        this.c.log.info('bridge BID registered', { bid: r.bid, amount: r.fields.amount, destination: r.destination.chain_id, timeout: r.fields.timeout });
        this.c.events?.publish('bridge_bid_registered', { bid: r.bid, status: 'PENDING', amount: r.fields.amount, chain: r.destination.chain_id });
      } else {
        this.c.log.info('bridge BID status', { bid: r.bid, status: a.status, previous: a.previous, direction: r.direction });
        this.c.events?.publish('bridge_bid_status', { bid: r.bid, status: a.status, previous: a.previous, direction: r.direction });
      }
    }
  }

  private publishCounts(): void {
    for (const d of DIRECTIONS) for (const s of BID_STATUSES) this.c.metrics.bridgeBids.set({ status: s, direction: d }, this.counts.get(`${d}:${s}`) ?? 0);
  }
}
