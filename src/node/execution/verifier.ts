/**
 * Transaction signature verification on a pool of worker threads, so the HTTP loop stays
 * responsive, with two caches, so a transaction verified at admission is not verified again at
 * block import: one keyed by a slice of the signature holding the whole envelope (a hit is a map
 * lookup and one byte comparison, with no hash to compute) for type 0 transfers, and one keyed by
 * transaction hash (the hash commits to the signature) for the types without a fixed signature
 * position.
 */
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { toHex } from '../../core/codec/bytes.js';
import { ExecutionError } from './errors.js';
import { encodeTx, envelopeSignatureKey, type Transaction } from '../../core/types/transaction.js';
import { sha3 } from '../../core/crypto/hash.js';
import type { KeyCacheStats } from '../../core/crypto/mldsa-wasm.js';
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

/** A worker's answer for one envelope; `hash` (0x hex) when it was asked to derive it. */
interface WorkerResult {
  signer: string | null;
  ms: number;
  hash?: string;
}

interface Pending {
  resolve: (r: WorkerResult[]) => void;
  reject: (e: Error) => void;
}

/** Byte bound of the verified-signer cache: about 200,000 transactions. */
export const VERIFIED_CACHE_BYTES = 64 * 1024 * 1024;
/** Estimated resident bytes of one entry: a 66-character hash key, a 42-character signer, a map slot. */
const VERIFIED_ENTRY_BYTES = 320;
/**
 * Byte bound of the envelope-keyed cache, whose entries hold whole envelopes for the comparison:
 * about 24,000 transfers, a pool's worth of recent admissions for the blocks that include them.
 */
export const VERIFIED_ENVELOPE_CACHE_BYTES = 128 * 1024 * 1024;
/** Estimated resident bytes of an envelope-cache entry besides the envelope: key, hash, signer, slot. */
const ENVELOPE_ENTRY_OVERHEAD = 400;
/** Unanswered messages a worker may hold; further jobs queue and go out together when it answers. */
const WORKER_MESSAGES_IN_FLIGHT = 2;
/** Smallest transfer buffer: a few dozen envelopes, so admission's batches reuse one buffer whatever their size. */
const MIN_TRANSFER_BUFFER_BYTES = 256 * 1024;
/** Bytes of returned transfer buffers kept for reuse (a full block's envelopes fit in two). */
const SPARE_TRANSFER_BYTES = 16 * 1024 * 1024;

/** A verified envelope, as the envelope-keyed cache holds it. */
interface VerifiedEnvelope {
  envelope: Uint8Array;
  hash: string;
  signer: string;
}

/** Byte equality by native memcmp: a JavaScript loop over a 5 KB envelope costs several microseconds. */
function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.byteLength === b.byteLength && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));
}

/** The envelope cache's key for `envelope`, or undefined for a type without a fixed signature position. */
function envelopeKey(envelope: Uint8Array): string | undefined {
  const k = envelopeSignatureKey(envelope);
  return k && Buffer.from(k.buffer, k.byteOffset, k.byteLength).toString('latin1');
}

/** Hands each job of a message its slice of the worker's answers, in order. */
function settleGroup(group: ReadonlyArray<{ envelopes: Uint8Array[] } & Pending>, results: WorkerResult[]): void {
  let k = 0;
  for (const j of group) {
    j.resolve(results.slice(k, k + j.envelopes.length));
    k += j.envelopes.length;
  }
}

function rejectGroup(group: ReadonlyArray<Pending>, err: Error): void {
  for (const j of group) j.reject(err);
}

export class SignatureVerifier {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, Pending>();
  private readonly cache = new ByteCache<string>(VERIFIED_CACHE_BYTES, () => VERIFIED_ENTRY_BYTES);
  private readonly byEnvelope = new ByteCache<VerifiedEnvelope>(VERIFIED_ENVELOPE_CACHE_BYTES, (v) => v.envelope.byteLength + ENVELOPE_ENTRY_OVERHEAD);
  private nextId = 0;
  private closed = false;
  private readonly queued: Array<{ envelopes: Uint8Array[]; hashIt: boolean } & Pending> = [];
  /** Each worker's key cache as of its latest answer. */
  private readonly keyStats = new Map<Worker, KeyCacheStats>();
  /** Key-cache lookups of workers that exited (their caches went with them). */
  private readonly retiredLookups = { hits: 0, misses: 0 };
  /** Messages each worker has not answered yet. */
  private readonly inFlight = new Map<Worker, number>();
  private flushScheduled = false;
  /**
   * Transfer buffers the workers handed back with their answers. A fresh buffer per message cost
   * the main thread page faults (zeroed pages for every message) and the GC a sweep of each.
   */
  private readonly spare: ArrayBuffer[] = [];
  private spareBytes = 0;

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
      w.on('message', (msg: { ready?: boolean; id?: number; results?: WorkerResult[]; buffer?: ArrayBuffer; keys?: KeyCacheStats }) => {
        if (msg.ready) return resolve();
        if (msg.buffer) this.recycle(msg.buffer);
        if (msg.keys) this.keyStats.set(w, msg.keys);
        this.inFlight.set(w, Math.max(0, (this.inFlight.get(w) ?? 1) - 1));
        // What queued while this worker was busy goes out now, as one message.
        if (this.queued.length > 0) this.scheduleFlush();
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
        this.inFlight.delete(w);
        this.retireKeys(w);
        if (this.closed) return;
        this.failPending(new ExecutionError('VERIFIER_FAILED', `signature verifier thread exited with code ${code}`));
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
   * Queues envelopes for a worker. Jobs are sent to a worker with fewer than
   * WORKER_MESSAGES_IN_FLIGHT messages unanswered, all it gets in one message with the envelopes
   * packed into one transferred buffer (which the worker hands back with its answer, for the next
   * message); the rest wait for a worker to answer. Under load a busy
   * worker's next message so carries everything that arrived meanwhile: the main thread's cost
   * per message (a postMessage per transaction cost more than the hashing) is shared by many.
   */
  private run(envelopes: Uint8Array[], hashIt: boolean): Promise<WorkerResult[]> {
    if (this.closed) return Promise.reject(new ExecutionError('SHUTTING_DOWN', 'node is shutting down'));
    return new Promise((resolve, reject) => {
      this.queued.push({ envelopes, hashIt, resolve, reject });
      this.scheduleFlush();
    });
  }

  private scheduleFlush(): void {
    if (this.flushScheduled) return;
    this.flushScheduled = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushScheduled = false;
    if (this.closed || this.queued.length === 0) return;
    if (this.workers.length === 0) {
      // Every thread died and replacements are starting: try again shortly.
      this.flushScheduled = true;
      setTimeout(() => this.flush(), 10);
      return;
    }
    // Two messages in flight keep a worker busy (the next batch waits in its port) without
    // splitting the queue into more messages than the workers can start on. The queue is spread
    // over every free slot, shallowest first (a slot's depth is how many messages its worker runs
    // before it, so an idle worker's first slot precedes a busy worker's only free one): an idle
    // worker given two messages answers the first while it runs the second, so those callers go
    // on while it still works instead of all of them at the end.
    const slots: Worker[] = [];
    for (let depth = 0; depth < WORKER_MESSAGES_IN_FLIGHT; depth++) {
      for (const w of this.workers) if ((this.inFlight.get(w) ?? 0) <= depth) slots.push(w);
    }
    if (slots.length === 0) return;
    const jobs = this.queued.splice(0);
    const perSlot: Array<typeof jobs> = slots.map(() => []);
    // Counted from the first slot each time: the slots' order already puts the least busy worker first.
    for (let k = 0; k < jobs.length; k++) perSlot[k % slots.length]!.push(jobs[k]!);
    for (let si = 0; si < perSlot.length; si++) {
      const group = perSlot[si]!;
      if (group.length > 0) this.send(slots[si]!, group);
    }
  }

  /**
   * One message to `w` with every envelope of `group`, packed back to back. Loops rather than
   * callbacks: closures made per message were compiled again by the optimiser for each message.
   */
  private send(w: Worker, group: Array<{ envelopes: Uint8Array[]; hashIt: boolean } & Pending>): void {
    let count = 0;
    let bytes = 0;
    for (const j of group) {
      count += j.envelopes.length;
      for (const e of j.envelopes) bytes += e.length;
    }
    const packed = this.transferBuffer(bytes);
    const lengths = new Array<number>(count);
    const hashIt = new Array<boolean>(count);
    let off = 0;
    let i = 0;
    for (const j of group) {
      for (const e of j.envelopes) {
        packed.set(e, off);
        off += e.length;
        lengths[i] = e.length;
        hashIt[i++] = j.hashIt;
      }
    }
    const id = this.nextId++;
    this.pending.set(id, { resolve: (results) => settleGroup(group, results), reject: (err) => rejectGroup(group, err) });
    this.inFlight.set(w, (this.inFlight.get(w) ?? 0) + 1);
    w.postMessage({ id, packed, lengths, hashIt }, [packed.buffer]);
  }

  /** A view of `bytes` over a returned buffer that is large enough, or over a new one. */
  private transferBuffer(bytes: number): Uint8Array<ArrayBuffer> {
    const i = this.spare.findIndex((b) => b.byteLength >= bytes);
    if (i < 0) return new Uint8Array(new ArrayBuffer(Math.max(bytes, MIN_TRANSFER_BUFFER_BYTES)), 0, bytes);
    const buffer = this.spare.splice(i, 1)[0]!;
    this.spareBytes -= buffer.byteLength;
    return new Uint8Array(buffer, 0, bytes);
  }

  /** Keeps a buffer a worker handed back, within SPARE_TRANSFER_BYTES. */
  private recycle(buffer: ArrayBuffer): void {
    if (this.spareBytes + buffer.byteLength > SPARE_TRANSFER_BYTES) return;
    this.spare.push(buffer);
    this.spareBytes += buffer.byteLength;
  }

  private remember(hash: string, signer: string, envelope: Uint8Array, key: string | undefined): void {
    // An envelope with a signature key is remembered by that key alone (a caller passing its hash
    // finds it there too): a second entry per admitted transfer was garbage-collector work for nothing.
    if (key === undefined) {
      this.cache.set(hash, signer);
      return;
    }
    // A view into a larger buffer (a request body holding many envelopes) is copied, so the cache's byte bound is what it holds.
    const own = envelope.byteOffset === 0 && envelope.byteLength === envelope.buffer.byteLength ? envelope : new Uint8Array(envelope);
    this.byEnvelope.set(key, { envelope: own, hash, signer });
  }

  /** Bytes and entries of the verified-signer caches (both together), for metrics. */
  cacheStats(): CacheStats {
    const a = this.cache.stats();
    const b = this.byEnvelope.stats();
    return { bytes: a.bytes + b.bytes, entries: a.entries + b.entries, maxBytes: a.maxBytes + b.maxBytes };
  }

  /**
   * The worker threads' caches of expanded public keys, together, as of each thread's latest
   * answer; the lookups of threads that exited stay counted.
   */
  keyCacheStats(): KeyCacheStats {
    const total = { ...this.retiredLookups, bytes: 0, entries: 0, maxBytes: 0 };
    for (const k of this.keyStats.values()) {
      total.hits += k.hits;
      total.misses += k.misses;
      total.bytes += k.bytes;
      total.entries += k.entries;
      total.maxBytes += k.maxBytes;
    }
    return total;
  }

  private retireKeys(w: Worker): void {
    const k = this.keyStats.get(w);
    if (!k) return;
    this.retiredLookups.hits += k.hits;
    this.retiredLookups.misses += k.misses;
    this.keyStats.delete(w);
  }

  /**
   * Verifies many transactions, spreading uncached ones across all workers. Callers that hold
   * the canonical envelopes pass them so nothing is encoded twice. Without `hashes`, each
   * transaction's hash is derived only for envelopes the envelope-keyed cache does not hold (a
   * known envelope costs a lookup and a byte comparison, not a SHA3 of its 5 KB), by the worker
   * that verifies it, so the main thread does not hash at all.
   */
  async verifyMany(txs: Transaction[], known: { envelopes?: Uint8Array[]; hashes?: Uint8Array[] } = {}): Promise<VerifyResult[]> {
    const envelopes = known.envelopes ?? txs.map(encodeTx);
    const results = new Array<VerifyResult>(envelopes.length);
    const keys = new Array<string | undefined>(envelopes.length);
    const todo: number[] = [];
    const hashed: number[] = [];
    for (let i = 0; i < envelopes.length; i++) {
      const envelope = envelopes[i]!;
      const h = known.hashes?.[i];
      const key = envelopeKey(envelope);
      keys[i] = key;
      const hit = key === undefined ? undefined : this.byEnvelope.get(key);
      if (hit && sameBytes(hit.envelope, envelope)) {
        this.observer?.cacheHit();
        results[i] = { hash: hit.hash, signer: hit.signer, cached: true, size: envelope.length };
        continue;
      }
      if (h === undefined && key !== undefined) {
        // Not known here: the worker derives the hash beside the signature, off the main thread.
        results[i] = { hash: '', signer: null, cached: false, size: envelope.length };
        hashed.push(i);
        continue;
      }
      // A caller that passes the hash has paid for it (a keyed envelope the cache does not hold goes to a worker, like any other).
      const hash = toHex(h ?? sha3(envelope));
      const signer = key === undefined ? this.cache.get(hash) : undefined;
      results[i] = { hash, signer: signer ?? null, cached: signer !== undefined, size: envelope.length };
      if (signer === undefined) todo.push(i);
      else this.observer?.cacheHit();
    }
    if (todo.length + hashed.length === 0) return results;
    const jobs: Array<Promise<void>> = [];
    for (const [list, hashIt] of [[todo, false], [hashed, true]] as const) {
      if (list.length === 0) continue;
      const chunks = Math.max(1, Math.min(this.workers.length, list.length));
      const size = Math.ceil(list.length / chunks);
      for (let c = 0; c < chunks; c++) jobs.push(this.verifyChunk(list.slice(c * size, (c + 1) * size), hashIt, envelopes, keys, results));
    }
    await Promise.all(jobs);
    return results;
  }

  /** Has a worker verify the envelopes at `idx` and fills their results (methods, not per-call closures: see send). */
  private async verifyChunk(idx: number[], hashIt: boolean, envelopes: Uint8Array[], keys: Array<string | undefined>, results: VerifyResult[]): Promise<void> {
    const chunk = new Array<Uint8Array>(idx.length);
    for (let k = 0; k < idx.length; k++) chunk[k] = envelopes[idx[k]!]!;
    const out = await this.run(chunk, hashIt);
    for (let k = 0; k < out.length; k++) {
      const o = out[k]!;
      const i = idx[k]!;
      const r = results[i]!;
      if (o.hash !== undefined) r.hash = o.hash;
      this.observer?.verified(o.ms, o.signer !== null);
      r.signer = o.signer;
      if (o.signer) this.remember(r.hash, o.signer, envelopes[i]!, keys[i]);
    }
  }

  /** Stops the workers. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queued.splice(0)) job.reject(new ExecutionError('SHUTTING_DOWN', 'node is shutting down'));
    await Promise.all(this.workers.map((w) => w.terminate()));
  }
}
