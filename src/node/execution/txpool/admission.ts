/**
 * The transaction admission pipeline (spec order, first failure rejects, spec messages), shared
 * by every ingress path: REST, JSON-RPC, the faucet and P2P gossip.
 */
import { SvcError, TxError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import { isRecommit, recommitProblem, RecommitError } from '../../../core/consensus/recommit.js';
import { validateDeploy } from '../../../vm/index.js';
import { isBridgeAddress } from '../../../core/bridge/gas.js';
import { toHex, toBase64 } from '../../../core/codec/bytes.js';
import { type Transaction, TxType, checkGasPrice, decodeTx, encodeTx, isAuthorization, maxCost, txKind } from '../../../core/types/transaction.js';
import { checkGasLimit } from '../../../core/gas.js';
import type { Logger } from '../../../util/log.js';
import type { ExecutionChain } from '../chain.js';
import type { JournalEntry, PoolJournal } from './journal.js';
import { type ExecutionMetrics, MALFORMED_SUBMISSION } from '../metrics.js';
import { RateLimitError } from '../api/rate-limit.js';
import type { BatchOp, WriteBatch } from '../../shared/store.js';
import { PoolError, type PoolEntry, TxPool } from './pool.js';
import { type PoolStatus } from '../../../api/execution.js';
import type { SignatureVerifier, VerifyResult } from '../verifier.js';
import type { StateView } from '../state/types.js';
import type { MempoolEntryJson } from '../../../api/execution.js';

/** Where a transaction came from (for logs and metrics); `journal` is the start-up replay, `pool` a peer's pool (the pool exchange). */
export type TxSource = 'rest' | 'rpc' | 'faucet' | 'p2p' | 'pool' | 'reorg' | 'journal';

/** A transaction admitted and durable, as the admission listeners see it. */
export interface AdmittedTx {
  hash: string;
  /** The canonical signed envelope (what the journal holds and gossip carries). */
  envelope: Uint8Array;
  source: TxSource;
}

/** Journal entries whose signatures are checked together on replay, ahead of their admission. */
const REPLAY_VERIFY_CHUNK = 256;

/** Optional inputs of a submission. */
export interface SubmitOptions {
  /** The canonical signed envelope, when the caller received it (saves re-encoding). */
  envelope?: Uint8Array;
  /** Rate limit keyed on the verified sender, run right after the signature check. */
  limitSender?: (sender: string) => void;
  /** Chain-database writes made durable before the transaction's journal record, in the same group-commit write (the faucet's claim). */
  durableWith?: WriteBatch;
}

/** What the start-up replay of the pool journal did. */
export interface ReplayResult {
  restored: number;
  dropped: number;
}

/** An admitted transaction. */
export interface Admitted {
  hash: string;
  status: PoolStatus;
  replaced?: string;
}

/** What most admissions displace (shared, so the common case allocates no array). */
const NOTHING_DISPLACED: readonly string[] = Object.freeze([]);

/** A pooled submission of a batch (index `i`) waiting for its journal write. */
interface Journaled {
  i: number;
  tx: PoolEntry;
  displaced: readonly string[];
}

/** A submission as submitMany takes it. */
export interface Submission {
  tx: Transaction;
  source: TxSource;
  opts: SubmitOptions;
}

/** A submission the pipeline refused, with the error `submit` throws for it. */
export class SubmitRefusal {
  constructor(readonly error: unknown) {}
}

/** Most `submit` callers of one event-loop turn that go through the pipeline as one batch (see takeIncoming). */
const SUBMIT_BATCH_MAX = 16;

/** A caller of `submit` waiting for the next batch. */
interface Waiting extends Submission {
  resolve: (a: Admitted) => void;
  reject: (err: unknown) => void;
}

export class Admission {
  private readonly maxGas: bigint;
  private incoming: Waiting[] = [];
  private readonly minGasPrice: bigint;
  private readonly listeners: Array<(tx: AdmittedTx) => void> = [];

  constructor(
    private readonly chain: ExecutionChain,
    readonly pool: TxPool,
    private readonly verifier: SignatureVerifier,
    private readonly metrics: ExecutionMetrics,
    private readonly log: Logger,
    readonly journal: PoolJournal,
  ) {
    this.maxGas = BigInt(chain.genesis.config.max_gas_per_block);
    this.minGasPrice = BigInt(chain.genesis.config.min_gas_price);
  }

  /** Account nonce at the head. */
  accountNonce = (sender: string): bigint => this.chain.headState().account(sender).nonce;

  /** The head view `pooled` reads account nonces from, set only for its synchronous run. */
  private poolingHead: StateView | undefined;
  /**
   * Account nonces at `poolingHead`, for the pool's queue bounds: one function for the node's
   * life, because a closure made per batch was compiled afresh by the optimiser for every batch.
   */
  private readonly nonceAtPooling = (sender: string): bigint => (this.poolingHead ?? this.chain.headState()).account(sender).nonce;

  /**
   * Runs the pipeline and pools the transaction; throws the first failing rule's error.
   * `limitSender` runs right after the signature check, so a rate limit keyed on the sender
   * cannot be spent by someone else's forged transactions. Submissions of one event-loop turn
   * go through the pipeline together (see submitMany), so concurrent callers share one
   * verification round, one state prefetch and one journal write.
   */
  submit(tx: Transaction, source: TxSource, opts: SubmitOptions = {}): Promise<Admitted> {
    return new Promise<Admitted>((resolve, reject) => {
      this.incoming.push({ tx, source, opts, resolve, reject });
      if (this.incoming.length === 1) setImmediate(this.takeIncoming);
    });
  }

  /**
   * Runs the submissions queued since the last turn in batches of at most SUBMIT_BATCH_MAX and
   * settles each caller. Several smaller batches rather than one: callers that resubmit as soon
   * as they are answered (a client with N in flight) otherwise move in lockstep with the
   * verifier threads, which then idle while the main thread pools a whole turn's batch.
   */
  private readonly takeIncoming = (): void => {
    const all = this.incoming;
    this.incoming = [];
    for (let from = 0; from < all.length; from += SUBMIT_BATCH_MAX) this.settle(all.length <= SUBMIT_BATCH_MAX ? all : all.slice(from, from + SUBMIT_BATCH_MAX));
  };

  /** Runs one batch of waiting callers through submitMany and settles each. */
  private settle(batch: Waiting[]): void {
    this.submitMany(batch).then(
      (out) => {
        for (let i = 0; i < batch.length; i++) {
          const o = out[i]!;
          if (o instanceof SubmitRefusal) batch[i]!.reject(o.error);
          else batch[i]!.resolve(o);
        }
      },
      (err: unknown) => {
        for (const s of batch) s.reject(err);
      },
    );
  }

  /**
   * Runs many submissions through the pipeline together, each judged alone (its own rules,
   * errors, metrics and log line, in submission order, so a sender's later nonce sees its
   * earlier one pooled): one signature-verification round for all, one batched state prefetch
   * for their senders, one journal write made durable before any of them is answered. Never
   * rejects: each outcome is the submission's Admitted or a SubmitRefusal with what `submit`
   * would have thrown.
   */
  async submitMany(items: readonly Submission[]): Promise<Array<Admitted | SubmitRefusal>> {
    const out = new Array<Admitted | SubmitRefusal>(items.length);
    try {
      await this.admitBatch(items, out);
    } catch (err) {
      // A failure outside any one submission's rules (a bug, a closed store) refuses what it left unsettled.
      for (let i = 0; i < items.length; i++) if (out[i] === undefined) out[i] = this.refuse(items[i]!, err);
    } finally {
      this.metrics.mempoolSize.set(this.pool.size);
    }
    return out;
  }

  /** Counts and logs a refused submission; the outcome that carries its error. */
  private refuse(item: Submission, err: unknown): SubmitRefusal {
    const reason = err instanceof SvcError ? err.code : 'INTERNAL';
    this.metrics.txRejected.inc({ reason });
    // Peers' refusals are counted by reason; a line each would let any peer flood the log.
    this.log[item.source === 'p2p' || item.source === 'pool' ? 'debug' : 'info']('tx rejected', { source: item.source, reason, error: (err as Error).message });
    return new SubmitRefusal(err);
  }

  /** submitMany's pipeline: fills `out` for every item. */
  private async admitBatch(items: readonly Submission[], out: Array<Admitted | SubmitRefusal>): Promise<void> {
    const n = items.length;
    // Encoded once when the caller has no envelope: the journal stores it and the listeners (gossip) send it.
    const envelopes = new Array<Uint8Array>(n);
    const toVerify: number[] = [];
    for (let i = 0; i < n; i++) {
      const item = items[i]!;
      try {
        envelopes[i] = item.opts.envelope ?? encodeTx(item.tx);
        toVerify.push(i);
      } catch (err) {
        out[i] = this.refuse(item, err);
      }
    }
    if (toVerify.length === 0) return;
    // Step 2 runs first in code because step 1's path needs the verified signer too; a failing
    // signature rejects every type, so the observable order is the spec's.
    // Loops, not map callbacks: a closure made per batch is compiled again by the optimiser for
    // each batch once it is hot, and that compiling was most of admission's off-main-thread CPU.
    const txs = new Array<Transaction>(toVerify.length);
    const toVerifyEnvelopes = new Array<Uint8Array>(toVerify.length);
    for (let k = 0; k < toVerify.length; k++) {
      txs[k] = items[toVerify[k]!]!.tx;
      toVerifyEnvelopes[k] = envelopes[toVerify[k]!]!;
    }
    const verified = await this.verifier.verifyMany(txs, { envelopes: toVerifyEnvelopes });
    const signed: Array<{ i: number; v: VerifyResult; sender: string }> = [];
    const senders = new Set<string>();
    for (let k = 0; k < toVerify.length; k++) {
      const i = toVerify[k]!;
      try {
        const sender = this.senderOf(items[i]!.tx, verified[k]);
        signed.push({ i, v: verified[k]!, sender });
        senders.add(sender);
      } catch (err) {
        out[i] = this.refuse(items[i]!, err);
      }
    }
    if (signed.length === 0) return;
    // Batched read of the senders' trie paths, so the synchronous reads below are cache hits.
    await this.chain.prefetchHead(senders);
    const receivedAt = Date.now();
    let head = this.chain.headState();
    const journaled: Journaled[] = [];
    // Journal writes queued for `journaled[from, to)`: one for the batch unless a bridge check yields.
    const writes: Array<{ from: number; to: number; done: Promise<void> }> = [];
    let extra: BatchOp[] = [];
    const queueWrite = (): void => {
      const from = writes.length === 0 ? 0 : writes[writes.length - 1]!.to;
      if (journaled.length === from) return;
      writes.push({ from, to: journaled.length, done: this.journal.addMany(from === 0 ? journaled : journaled.slice(from), extra) });
      extra = [];
    };
    for (const { i, v, sender } of signed) {
      const item = items[i]!;
      try {
        const input = this.rules(item.tx, v, sender, envelopes[i]!, item.opts, head, receivedAt);
        if (!isAuthorization(item.tx) && isBridgeAddress(item.tx.to)) {
          // What is pooled is journaled in the same turn, before anything yields: a block handled
          // meanwhile that includes it then finds its record, and its removal is kept.
          queueWrite();
          // A bridge operation is judged against the head state as its block will judge it: a doomed one costs its sender nothing.
          await this.chain.bridge.admit({ sender, hash: v.hash, value: item.tx.value, data: item.tx.data }, () => this.chain.headState());
          head = this.chain.headState();
        }
        const { entry, displaced, admitted } = this.pooled(input, head);
        out[i] = admitted;
        // The pool entry is the journal entry too (hash, envelope, receivedAt): no copy per transaction.
        journaled.push({ i, tx: entry, displaced });
        if (item.opts.durableWith) for (const op of item.opts.durableWith.ops) extra.push(op);
      } catch (err) {
        out[i] = this.refuse(item, err);
      }
    }
    queueWrite();
    // Settled together, so a failed write is observed however many there are. A 2xx means every record in its write is synced.
    const settled = await Promise.allSettled(writes.map((w) => w.done));
    const durable: Journaled[] = [];
    for (let w = 0; w < writes.length; w++) {
      const { from, to } = writes[w]!;
      const result = settled[w]!;
      for (let k = from; k < to; k++) {
        const j = journaled[k]!;
        if (result.status === 'fulfilled') {
          durable.push(j);
          continue;
        }
        // Not durable, so not acknowledged: the transaction leaves the pool again.
        if (this.pool.get(j.tx.hash) === j.tx) this.pool.remove(j.tx.hash);
        out[j.i] = this.refuse(items[j.i]!, result.reason);
      }
    }
    for (const j of durable) {
      const item = items[j.i]!;
      this.log.debug('tx admitted', { hash: j.tx.hash, source: item.source, status: (out[j.i] as Admitted).status });
      for (const listener of this.listeners) {
        // The transaction is acknowledged already: a listener's failure must not turn it into an error.
        try {
          listener({ hash: j.tx.hash, envelope: j.tx.envelope, source: item.source });
        } catch (err) {
          this.log.warn('admission listener failed', { hash: j.tx.hash, error: (err as Error).message });
        }
      }
    }
  }

  /**
   * Counts a submission refused before the pipeline ran, so every refusal is a rejection: the
   * client's rate limit (RATE_LIMITED), a spec error found while parsing (its code, e.g.
   * INVALID_SENDER), or a request or envelope that does not parse (MALFORMED).
   */
  refusedBeforeAdmission(err: unknown): void {
    const reason = err instanceof RateLimitError || err instanceof TxError ? err.code : MALFORMED_SUBMISSION;
    this.metrics.txRejected.inc({ reason });
  }

  /**
   * Calls `listener` for every transaction `submit` admits, once it is durable. The start-up
   * replay does not call it: what it restores is in the pool, where a listener can read it.
   */
  onAdmitted(listener: (tx: AdmittedTx) => void): void {
    this.listeners.push(listener);
  }

  /**
   * Replays the pool journal through the whole pipeline (start-up, before serving): what is
   * still valid is pooled again, anything else (included meanwhile, now unaffordable, past the
   * queue bounds...) leaves the journal with a log line and a count. Nonce order, so each
   * sender's run is rebuilt from its first nonce and nothing is refused as too far ahead.
   */
  async replay(): Promise<ReplayResult> {
    const decoded: Array<JournalEntry & { tx: Transaction }> = [];
    const dropped: string[] = [];
    const drop = (hash: string, reason: string, message: string): void => {
      dropped.push(hash);
      this.metrics.journalDropped.inc({ reason });
      this.log.warn('journaled tx dropped', { hash, reason, error: message });
    };
    for (const e of this.journal.entries()) {
      try {
        decoded.push({ ...e, tx: decodeTx(e.envelope) });
      } catch (err) {
        drop(e.hash, err instanceof SvcError ? err.code : 'MALFORMED_INPUT', (err as Error).message);
      }
    }
    decoded.sort((a, b) => (a.tx.nonce !== b.tx.nonce ? (a.tx.nonce < b.tx.nonce ? -1 : 1) : a.receivedAt - b.receivedAt));
    let restored = 0;
    for (let i = 0; i < decoded.length; i += REPLAY_VERIFY_CHUNK) {
      const chunk = decoded.slice(i, i + REPLAY_VERIFY_CHUNK);
      // Verified together on every worker; the admissions below are then answered by the cache.
      await this.verifier.verifyMany(chunk.map((e) => e.tx), { envelopes: chunk.map((e) => e.envelope) });
      for (const e of chunk) {
        try {
          const admitted = await this.check(e.tx, e.envelope, e.receivedAt);
          if (admitted.hash !== e.hash) throw new ExecutionError('JOURNAL_KEY_MISMATCH', `journal key ${e.hash} holds transaction ${admitted.hash}`);
          restored++;
        } catch (err) {
          drop(e.hash, err instanceof SvcError ? err.code : 'INTERNAL', (err as Error).message);
        }
      }
    }
    this.journal.remove(dropped);
    this.metrics.mempoolSize.set(this.pool.size);
    if (decoded.length + dropped.length > 0) this.log.info('pool journal replayed', { restored, dropped: dropped.length });
    return { restored, dropped: dropped.length };
  }

  /** The replay's pipeline for one journaled transaction: pooled again without a new journal record. */
  private async check(tx: Transaction, envelope: Uint8Array, receivedAt: number): Promise<Admitted> {
    const [v] = await this.verifier.verifyMany([tx], { envelopes: [envelope] });
    const sender = this.senderOf(tx, v);
    await this.chain.prefetchHead([sender]);
    const input = this.rules(tx, v!, sender, envelope, {}, this.chain.headState(), receivedAt);
    if (!isAuthorization(tx) && isBridgeAddress(tx.to)) await this.chain.bridge.admit({ sender, hash: v!.hash, value: tx.value, data: tx.data }, () => this.chain.headState());
    const { admitted, displaced } = this.pooled(input, this.chain.headState());
    // The entry is journaled already, but what it displaced (a smaller capacity now) is not kept.
    this.journal.remove(displaced);
    return admitted;
  }

  /** Step 2's outcome: the account the transaction acts for, or ErrInvalidSignature. */
  private senderOf(tx: Transaction, v: VerifyResult | undefined): string {
    if (!v || v.signer === null) throw new TxError('ErrInvalidSignature');
    // Type 3 acts for `from`: the recovered ECDSA key must be one `from` authorised.
    if (tx.type !== TxType.EcdsaAuthorized) return v.signer;
    const sender = toHex(tx.from);
    if (!this.chain.auth.has(sender, v.signer)) throw new TxError('ErrInvalidSignature');
    return sender;
  }

  /**
   * Steps 1 and 3-7 against `head` (the bridge's check, which reads asynchronously, is the
   * caller's); the entry to pool. Throws the first failing rule's error.
   */
  private rules(tx: Transaction, v: VerifyResult, sender: string, envelope: Uint8Array, opts: SubmitOptions, head: StateView, receivedAt: number): Omit<PoolEntry, 'seq'> {
    opts.limitSender?.(sender);
    if (this.pool.has(v.hash)) throw new PoolError('ALREADY_KNOWN', 'already known');
    const account = head.account(sender);
    // Step 3: nonce (authorisations consume one too, so a replay is refused here).
    if (tx.nonce < account.nonce) throw new TxError('ErrInvalidNonce');
    // Step 1: the authorisation path has no balance or gas checks and pays no fee.
    if (isAuthorization(tx)) return { tx, envelope, hash: v.hash, sender, nonce: tx.nonce, gasPrice: 0n, gasLimit: 0n, size: v.size, receivedAt };
    // Step 4: gas limit bounds.
    checkGasLimit(tx, this.maxGas);
    // Step 5: balance covers value + gas × gasPrice.
    if (account.balance < maxCost(tx)) throw new TxError('ErrInsufficientFunds');
    // Step 6: minimum gas price.
    checkGasPrice(tx, this.minGasPrice);
    // Step 7: a module the VM would refuse is refused here, before it is pooled or costs anything.
    if (txKind(tx) === 'contract_deploy') validateDeploy(tx.data);
    // A re-commitment that cannot take effect would only cost its sender a fee: refused with the rule it breaks.
    if (isRecommit(tx)) {
      const problem = recommitProblem(tx, (a) => this.chain.registry.get(a));
      if (problem !== undefined) throw new RecommitError(problem);
    }
    return { tx, envelope, hash: v.hash, sender, nonce: tx.nonce, gasPrice: tx.gasPrice, gasLimit: tx.gasLimit, size: v.size, receivedAt };
  }

  /** Adds to the pool (account nonces read from `head`): the entry, what it displaced, and the answer. */
  private pooled(input: Omit<PoolEntry, 'seq'>, head: StateView): { entry: PoolEntry; displaced: readonly string[]; admitted: Admitted } {
    // Read through one long-lived function (see nonceAtPooling) and only within this synchronous call.
    this.poolingHead = head;
    let added: ReturnType<TxPool['add']>;
    let status: PoolStatus;
    try {
      added = this.pool.add(input, this.nonceAtPooling);
      status = this.pool.status(added.entry, this.nonceAtPooling(added.entry.sender));
    } finally {
      this.poolingHead = undefined;
    }
    const { entry, replaced, evicted } = added;
    let displaced: readonly string[] = NOTHING_DISPLACED;
    if (replaced || evicted.length > 0) {
      displaced = [...(replaced ? [replaced.hash] : []), ...evicted.map((e) => e.hash)];
      for (const e of evicted) this.log.info('tx evicted', { hash: e.hash, gas_price: e.gasPrice });
    }
    const admitted: Admitted = replaced ? { hash: entry.hash, status, replaced: replaced.hash } : { hash: entry.hash, status };
    return { entry, displaced, admitted };
  }

  /** Removes transactions from the pool and the journal (they were included or can never be). */
  forget(hashes: readonly string[]): void {
    const gone = this.pool.removeMany(hashes);
    const hashesGone = new Array<string>(gone.length);
    for (let i = 0; i < gone.length; i++) hashesGone[i] = gone[i]!.hash;
    this.journal.remove(hashesGone);
  }

  /** Drops a sender's pooled transactions below its account nonce, from the pool and the journal. */
  dropStale(sender: string): void {
    this.journal.remove(this.pool.dropStale(sender, this.accountNonce(sender)).map((e) => e.hash));
  }

  /** Pool status of a pooled transaction. */
  statusOf(entry: PoolEntry): PoolStatus {
    return this.pool.status(entry, this.accountNonce(entry.sender));
  }

  /**
   * Build order for the proposer, packed under MaxGasPerBlock. Admission checks each transaction
   * against the balance alone, so a sender's pooled run can overdraw it, and one such transaction
   * would make block validation reject the whole block: a sender's run stops at the first
   * transaction its balance, less the cost (value + gasLimit × gasPrice) of its earlier ones in
   * this block, cannot cover. Computed in slices (the event loop runs between them).
   */
  async pending(maxGas: bigint = this.maxGas): Promise<PoolEntry[]> {
    const left = new Map<string, bigint>();
    // One state for the whole build, though it yields to the event loop between slices.
    const head = this.chain.headState();
    return this.pool.buildOrderSliced((sender) => head.account(sender).nonce, maxGas, (e) => {
      const balance = left.get(e.sender) ?? head.account(e.sender).balance;
      const cost = maxCost(e.tx);
      if (cost > balance) return false;
      left.set(e.sender, balance - cost);
      return true;
    });
  }

  /** Spec mempool entries of `entries`, computing each sender's ready run once. */
  views(entries: PoolEntry[]): MempoolEntryJson[] {
    const pending = new Map<string, bigint>();
    return entries.map((e) => {
      let p = pending.get(e.sender);
      if (p === undefined) pending.set(e.sender, (p = this.pool.pendingNonce(e.sender, this.accountNonce(e.sender))));
      return this.view(e, p > e.nonce ? 'ready' : 'queued');
    });
  }

  /** Spec mempool entry. */
  view(e: PoolEntry, status: PoolStatus = this.statusOf(e)): MempoolEntryJson {
    const tx = e.tx;
    const auth = isAuthorization(tx);
    return {
      hash: e.hash,
      type: tx.type,
      from: e.sender,
      to: auth || tx.to === null ? null : toHex(tx.to),
      value: auth ? '0' : tx.value.toString(),
      gas: Number(e.gasLimit),
      gas_price: e.gasPrice.toString(),
      nonce: Number(e.nonce),
      signature: toBase64(tx.type === TxType.EcdsaAuthorized ? tx.ecdsaSignature : tx.signature),
      public_key: tx.type === TxType.EcdsaAuthorized ? null : toBase64(tx.publicKey),
      status,
    };
  }

}
