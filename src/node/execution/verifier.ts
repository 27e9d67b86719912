/**
 * Transaction signature verification on a pool of worker threads, so the HTTP loop stays
 * responsive, with a cache keyed by transaction hash: the hash commits to the signature, so a
 * transaction verified at admission is not verified again at block import.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { toHex } from '../../core/codec/bytes.js';
import { SvcError } from '../../core/errors.js';
import { encodeTx, type Transaction } from '../../core/types/transaction.js';
import { sha3 } from '../../core/crypto/hash.js';
import { ByteCache, type CacheStats } from '../../util/byte-cache.js';

/** Outcome of one verification. `signer` is null when the signature is invalid. */
export interface VerifyResult {
  hash: string;
  signer: string | null;
  cached: boolean;
  /** Envelope length in bytes. */
  size: number;
}

/** Hooks for metrics. */
export interface VerifierObserver {
  verified(ms: number, ok: boolean): void;
  cacheHit(): void;
}

interface Pending {
  resolve: (r: Array<{ signer: string | null; ms: number }>) => void;
  reject: (e: Error) => void;
}

/** Byte bound of the verified-signer cache: about 200,000 transactions. */
export const VERIFIED_CACHE_BYTES = 64 * 1024 * 1024;
/** Estimated resident bytes of one entry: a 66-character hash key, a 42-character signer, a map slot. */
const VERIFIED_ENTRY_BYTES = 320;

export class SignatureVerifier {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly cache = new ByteCache<string>(VERIFIED_CACHE_BYTES, () => VERIFIED_ENTRY_BYTES);
  private nextId = 0;
  private rr = 0;
  private closed = false;
  private readonly queued: Array<{ envelopes: Uint8Array[] } & Pending> = [];
  private flushScheduled = false;

  private constructor(
    private readonly chainId: string,
    private readonly observer?: VerifierObserver,
  ) {}

  /** Starts `threads` workers (default: one per core) and waits until each has loaded its backend. */
  static async start(chainId: string, opts: { threads?: number; observer?: VerifierObserver } = {}): Promise<SignatureVerifier> {
    const v = new SignatureVerifier(chainId, opts.observer);
    const n = Math.max(1, opts.threads ?? availableParallelism());
    await Promise.all(Array.from({ length: n }, () => v.spawn()));
    return v;
  }

  private spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const w = new Worker(new URL('./verify-worker.js', import.meta.url), { workerData: { chainId: this.chainId } });
      w.on('message', (msg: { ready?: boolean; id?: number; results?: Array<{ signer: string | null; ms: number }> }) => {
        if (msg.ready) return resolve();
        const p = this.pending.get(msg.id!);
        if (p) {
          this.pending.delete(msg.id!);
          p.resolve(msg.results!);
        }
      });
      w.on('error', (err) => {
        reject(err);
        this.failPending(err);
      });
      // A worker that dies (crash, out of memory) is replaced, so verification never hangs on
      // a dead thread; the jobs it held fail and their callers see an internal error.
      w.on('exit', (code) => {
        const i = this.workers.indexOf(w);
        if (i >= 0) this.workers.splice(i, 1);
        if (this.closed) return;
        this.failPending(new SvcError('VERIFIER_FAILED', `signature verifier thread exited with code ${code}`, 500));
        this.spawn().catch(() => undefined);
      });
      this.workers.push(w);
    });
  }

  private failPending(err: Error): void {
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
  }

  /**
   * Queues envelopes for a worker. Jobs queued in the same event-loop turn are sent together:
   * one message per worker, envelopes packed into one transferred buffer, because a
   * structured-clone postMessage per transaction cost more main-thread time than the hashing.
   */
  private run(envelopes: Uint8Array[]): Promise<Array<{ signer: string | null; ms: number }>> {
    if (this.closed) return Promise.reject(new SvcError('SHUTTING_DOWN', 'node is shutting down', 503));
    return new Promise((resolve, reject) => {
      this.queued.push({ envelopes, resolve, reject });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.workers.length === 0) {
      // Every thread died and replacements are starting: try again shortly.
      this.flushScheduled = true;
      setTimeout(() => this.flush(), 10);
      return;
    }
    const jobs = this.queued.splice(0);
    const perWorker: Array<typeof jobs> = this.workers.map(() => []);
    for (const job of jobs) perWorker[this.rr++ % this.workers.length]!.push(job);
    perWorker.forEach((group, wi) => {
      if (group.length === 0) return;
      const all = group.flatMap((j) => j.envelopes);
      const packed = new Uint8Array(all.reduce((n, e) => n + e.length, 0));
      const lengths = new Array<number>(all.length);
      let off = 0;
      all.forEach((e, i) => {
        packed.set(e, off);
        off += e.length;
        lengths[i] = e.length;
      });
      const id = this.nextId++;
      this.pending.set(id, {
        resolve: (results) => {
          let k = 0;
          for (const j of group) {
            j.resolve(results.slice(k, k + j.envelopes.length));
            k += j.envelopes.length;
          }
        },
        reject: (err) => group.forEach((j) => j.reject(err)),
      });
      this.workers[wi]!.postMessage({ id, packed, lengths }, [packed.buffer]);
    });
  }

  private remember(hash: string, signer: string): void {
    this.cache.set(hash, signer);
  }

  /** Bytes and entries of the verified-signer cache, for metrics. */
  cacheStats(): CacheStats {
    return this.cache.stats();
  }

  /** Signer already proven for this hash, if any. */
  cached(hash: string): string | undefined {
    return this.cache.get(hash);
  }

  /**
   * Verifies many transactions, spreading uncached ones across all workers. Callers that hold
   * the canonical envelopes (and their hashes) pass them so nothing is encoded twice.
   */
  async verifyMany(txs: Transaction[], known: { envelopes?: Uint8Array[]; hashes?: Uint8Array[] } = {}): Promise<VerifyResult[]> {
    const envelopes = known.envelopes ?? txs.map(encodeTx);
    const hashes = (known.hashes ?? envelopes.map((e) => sha3(e))).map(toHex);
    const results: VerifyResult[] = hashes.map((hash, i) => {
      const signer = this.cache.get(hash);
      if (signer) this.observer?.cacheHit();
      return { hash, signer: signer ?? null, cached: signer !== undefined, size: envelopes[i]!.length };
    });
    const todo = results.map((r, i) => (r.cached ? -1 : i)).filter((i) => i >= 0);
    if (todo.length === 0) return results;
    const chunks = Math.max(1, Math.min(this.workers.length, todo.length));
    const size = Math.ceil(todo.length / chunks);
    await Promise.all(
      Array.from({ length: chunks }, async (_, c) => {
        const idx = todo.slice(c * size, (c + 1) * size);
        const out = await this.run(idx.map((i) => envelopes[i]!));
        out.forEach((o, k) => {
          const i = idx[k]!;
          this.observer?.verified(o.ms, o.signer !== null);
          results[i]!.signer = o.signer;
          if (o.signer) this.remember(results[i]!.hash, o.signer);
        });
      }),
    );
    return results;
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
