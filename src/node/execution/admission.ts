/**
 * The transaction admission pipeline (spec order, first failure rejects, spec messages), shared
 * by every ingress path: REST, JSON-RPC, the faucet and P2P gossip.
 */
import { SvcError, TxError } from '../../core/errors.js';
import { isRecommit, recommitProblem, RecommitError } from '../../core/consensus/recommit.js';
import { validateDeploy } from './vm/executor.js';
import { isBridgeAddress } from '../../core/bridge/gas.js';
import { toHex, toBase64 } from '../../core/codec/bytes.js';
import { type Transaction, TxType, checkGasLimit, checkGasPrice, decodeTx, encodeTx, isAuthorization, maxCost, txKind } from '../../core/types/transaction.js';
import type { Logger } from '../../util/log.js';
import type { ExecutionChain } from './chain.js';
import type { JournalEntry, PoolJournal } from './journal.js';
import { type ExecutionMetrics, MALFORMED_SUBMISSION } from './metrics.js';
import { RateLimitError } from './api/rate-limit.js';
import type { WriteBatch } from '../shared/store.js';
import { PoolError, type PoolEntry, TxPool } from './txpool.js';
import { type PoolStatus } from '../../api/execution.js';
import type { SignatureVerifier } from './verifier.js';
import type { MempoolEntryJson } from '../../api/execution.js';

/** Where a transaction came from (for logs and metrics); `journal` is the start-up replay. */
export type TxSource = 'rest' | 'rpc' | 'faucet' | 'p2p' | 'reorg' | 'journal';

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

export class Admission {
  private readonly maxGas: bigint;
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

  /**
   * Runs the pipeline and pools the transaction; throws the first failing rule's error.
   * `limitSender` runs right after the signature check, so a rate limit keyed on the sender
   * cannot be spent by someone else's forged transactions.
   */
  async submit(tx: Transaction, source: TxSource, opts: SubmitOptions = {}): Promise<Admitted> {
    try {
      // Encoded once: the journal stores it and the listeners (gossip) send it.
      const envelope = opts.envelope ?? encodeTx(tx);
      const { admitted, durable } = await this.check(tx, { ...opts, envelope }, true);
      await durable;
      this.log.debug('tx admitted', { hash: admitted.hash, source, status: admitted.status });
      for (const listener of this.listeners) {
        // The transaction is acknowledged already: a listener's failure must not turn it into an error.
        try {
          listener({ hash: admitted.hash, envelope, source });
        } catch (err) {
          this.log.warn('admission listener failed', { hash: admitted.hash, error: (err as Error).message });
        }
      }
      return admitted;
    } catch (err) {
      const reason = err instanceof SvcError ? err.code : 'INTERNAL';
      this.metrics.txRejected.inc({ reason });
      // Gossip refusals are counted by reason; a line each would let any peer flood the log.
      this.log[source === 'p2p' ? 'debug' : 'info']('tx rejected', { source, reason, error: (err as Error).message });
      throw err;
    } finally {
      this.metrics.mempoolSize.set(this.pool.size);
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
          const { admitted } = await this.check(e.tx, { envelope: e.envelope }, false, e.receivedAt);
          if (admitted.hash !== e.hash) throw new SvcError('JOURNAL_KEY_MISMATCH', `journal key ${e.hash} holds transaction ${admitted.hash}`, 400);
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

  /**
   * The pipeline; pools the transaction and, with `journal`, queues its journal entry in the
   * same turn (so a block including it cannot be handled between the two) and returns the
   * promise of its durability.
   */
  private async check(tx: Transaction, opts: SubmitOptions, journal: boolean, receivedAt = Date.now()): Promise<{ admitted: Admitted; durable: Promise<void> }> {
    // Step 2 runs first in code because step 1's path needs the verified signer too; a failing
    // signature rejects every type, so the observable order is the spec's.
    const [v] = await this.verifier.verifyMany([tx], opts.envelope ? { envelopes: [opts.envelope] } : {});
    if (!v || v.signer === null) throw new TxError('ErrInvalidSignature');
    // Type 3 acts for `from`: the recovered ECDSA key must be one `from` authorised.
    const sender = tx.type === TxType.EcdsaAuthorized ? toHex(tx.from) : v.signer;
    if (tx.type === TxType.EcdsaAuthorized && !this.chain.auth.has(sender, v.signer)) throw new TxError('ErrInvalidSignature');
    // Batched read of the sender's trie path, so the synchronous read below is a cache hit.
    await this.chain.prefetchHead([sender]);
    opts.limitSender?.(sender);
    if (this.pool.has(v.hash)) throw new PoolError('ALREADY_KNOWN', 'already known', 409);
    const account = this.chain.headState().account(sender);
    // Step 3: nonce (authorisations consume one too, so a replay is refused here).
    if (tx.nonce < account.nonce) throw new TxError('ErrInvalidNonce');
    // Step 1: the authorisation path has no balance or gas checks and pays no fee.
    const envelope = opts.envelope ?? encodeTx(tx);
    const pool = (input: Omit<PoolEntry, 'seq'>) => this.pooled(input, journal ? envelope : undefined, opts.durableWith);
    if (isAuthorization(tx)) return pool({ tx, envelope, hash: v.hash, sender, nonce: tx.nonce, gasPrice: 0n, gasLimit: 0n, size: v.size, receivedAt });
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
    // A bridge operation is judged against the head state as its block will judge it: a doomed one costs its sender nothing.
    if (isBridgeAddress(tx.to)) await this.chain.bridge.admit({ sender, hash: v.hash, value: tx.value, data: tx.data }, () => this.chain.headState());
    return pool({ tx, envelope, hash: v.hash, sender, nonce: tx.nonce, gasPrice: tx.gasPrice, gasLimit: tx.gasLimit, size: v.size, receivedAt });
  }

  /**
   * Adds to the pool and, given the envelope, journals the entry with the removal of what it
   * displaced in one batch. If that batch fails the transaction leaves the pool again (it was
   * not acknowledged) and the caller sees a JournalError.
   */
  private pooled(input: Omit<PoolEntry, 'seq'>, envelope: Uint8Array | undefined, durableWith: WriteBatch | undefined): { admitted: Admitted; durable: Promise<void> } {
    const { entry, replaced, evicted } = this.pool.add(input, this.accountNonce);
    for (const e of evicted) this.log.info('tx evicted', { hash: e.hash, gas_price: e.gasPrice });
    const displaced = [...(replaced ? [replaced.hash] : []), ...evicted.map((e) => e.hash)];
    const admitted = { hash: entry.hash, status: this.statusOf(entry), ...(replaced ? { replaced: replaced.hash } : {}) };
    if (!envelope) {
      // Replay: the entry is journaled already, but what it displaced (a smaller capacity now) is not kept.
      this.journal.remove(displaced);
      return { admitted, durable: Promise.resolve() };
    }
    const durable = this.journal.add({ hash: entry.hash, envelope, receivedAt: entry.receivedAt }, displaced, durableWith).catch((err: unknown) => {
      if (this.pool.get(entry.hash) === entry) this.pool.remove(entry.hash);
      throw err;
    });
    return { admitted, durable };
  }

  /** Removes transactions from the pool and the journal (they were included or can never be). */
  forget(hashes: readonly string[]): void {
    const gone: string[] = [];
    for (const h of hashes) if (this.pool.remove(h)) gone.push(h);
    this.journal.remove(gone);
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
