/**
 * Synchronous reads of LevelDB values for execution, whose host functions cannot await. A reader
 * worker thread opens the same database (classic-level's `multithreading: true`, which the main
 * thread's open must also set: the handle is shared per location only when both ask for it) and
 * answers one key at a time; the main thread blocks in `Atomics.wait` on a shared flag until the
 * answer is posted, then takes it with `receiveMessageOnPort`. Only cache misses come here: hot
 * paths prefetch asynchronously first (node-store.ts).
 */
import { MessageChannel, type MessagePort, receiveMessageOnPort, Worker } from 'node:worker_threads';
import { ExecutionError } from '../errors.js';
import { detached } from '../../../util/byte-arena.js';

/** A synchronous key → bytes reader. */
export interface SyncReader {
  /** The value under `key`, or undefined when there is none. */
  read(key: string): Uint8Array | undefined;
  /** Tells the reader what a committed batch wrote (only an in-memory reader needs it). */
  written(puts: ReadonlyMap<string, Uint8Array>, dels: readonly string[]): void;
  /** Stops the reader. */
  close(): Promise<void>;
}

/** Flag states in the shared Int32Array. */
const IDLE = 0;
const DONE = 1;
const DEAD = 2;

/** How long one read may block before the reader is declared stuck (a LevelDB read takes microseconds to milliseconds). */
export const SYNC_READ_TIMEOUT_MS = 30_000;

/** Reads through a worker thread that holds its own handle on the same LevelDB. */
export class WorkerSyncReader implements SyncReader {
  private dead: string | undefined;
  private next = 0;
  private closed: Promise<void> | undefined;
  private exited = false;

  private constructor(
    private readonly worker: Worker,
    private readonly port: MessagePort,
    private readonly flag: Int32Array,
    private readonly timeoutMs: number,
  ) {
    worker.on('exit', (code) => {
      this.exited = true;
      this.dead ??= `reader thread exited with code ${code}`;
    });
    worker.on('error', (err) => (this.dead ??= `reader thread failed: ${err.message}`));
  }

  /** Starts a reader on the LevelDB at `location` (the main thread opened it with `multithreading: true`). */
  static async start(location: string, timeoutMs = SYNC_READ_TIMEOUT_MS): Promise<WorkerSyncReader> {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(new URL('./sync-reader-worker.js', import.meta.url), { workerData: { location, flag, port: port2 }, transferList: [port2] });
    const reader = new WorkerSyncReader(worker, port1, flag, timeoutMs);
    await new Promise<void>((resolve, reject) => {
      port1.once('message', (m: { ready?: true; error?: string }) => (m.ready ? resolve() : reject(new ExecutionError('STATE_READER_FAILED', `state reader thread could not open ${location}: ${m.error}`))));
      worker.once('exit', (code) => reject(new ExecutionError('STATE_READER_FAILED', `state reader thread exited with code ${code} while opening ${location}`)));
    });
    // From here on answers are taken synchronously (receiveMessageOnPort), never as events.
    port1.removeAllListeners('message');
    port1.unref();
    // An idle reader must not keep the process alive (a node that forgets close() still exits).
    worker.unref();
    return reader;
  }

  read(key: string): Uint8Array | undefined {
    if (this.dead) throw new ExecutionError('STATE_READER_DEAD', `state read of ${key} failed: ${this.dead}`);
    const id = ++this.next;
    // Only an answered flag is reset: a thread that died since the last read (its exit handler set
    // DEAD while nothing waited) must not be overwritten, or this read would wait for the timeout.
    if (Atomics.compareExchange(this.flag, 0, DONE, IDLE) === DEAD) {
      this.dead = 'reader thread stopped';
      throw new ExecutionError('STATE_READER_DEAD', `state read of ${key} failed: the reader thread stopped`);
    }
    this.port.postMessage({ id, key });
    const deadline = Date.now() + this.timeoutMs;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0) {
        this.dead = `no answer within ${this.timeoutMs} ms`;
        throw new ExecutionError('STATE_READER_TIMEOUT', `state read of ${key} got no answer within ${this.timeoutMs} ms`);
      }
      Atomics.wait(this.flag, 0, IDLE, Math.min(left, 1000));
      const state = Atomics.load(this.flag, 0);
      if (state === DEAD) {
        this.dead = 'reader thread stopped';
        throw new ExecutionError('STATE_READER_DEAD', `state read of ${key} failed: the reader thread stopped`);
      }
      if (state !== DONE) continue;
      const msg = receiveMessageOnPort(this.port)?.message as { id: number; value?: Uint8Array; error?: string } | undefined;
      if (!msg || msg.id !== id) continue;
      if (msg.error !== undefined) throw new ExecutionError('STATE_READ_FAILED', `state read of ${key} failed: ${msg.error}`);
      return msg.value;
    }
  }

  written(): void {}

  /** Closes the worker's database handle, then the worker (a handle left open would keep the directory locked after the node closes its own). */
  async close(): Promise<void> {
    if (this.closed) return this.closed;
    this.closed = new Promise<void>((resolve) => {
      if (this.exited) return resolve();
      // Referenced again, so the process waits for the handle to close.
      this.worker.ref();
      this.worker.once('exit', () => resolve());
      this.port.postMessage({ id: -1, key: '', close: true });
    }).then(() => this.port.close());
    return this.closed;
  }

  /** Ends the worker abruptly: tests use it to show a dead reader gives a typed error, not a hang. */
  async kill(): Promise<void> {
    this.worker.ref();
    this.port.postMessage({ id: -1, key: '', exit: true });
    await new Promise<void>((resolve) => (this.exited ? resolve() : this.worker.once('exit', () => resolve())));
  }
}

/** The in-memory database's reader: the state keys every committed batch wrote, kept in a map (the whole database is in memory anyway). */
export class MemorySyncReader implements SyncReader {
  private readonly values = new Map<string, Uint8Array>();

  /** Seeds the map (an in-memory database reopened within one process). */
  load(entries: Iterable<[string, Uint8Array]>): void {
    for (const [k, v] of entries) this.values.set(k, v);
  }

  read(key: string): Uint8Array | undefined {
    return this.values.get(key);
  }

  written(puts: ReadonlyMap<string, Uint8Array>, dels: readonly string[]): void {
    // A commit's internal nodes are views of its arena (trie.ts): a copy each, not the chunk.
    for (const [k, v] of puts) this.values.set(k, detached(v));
    for (const k of dels) this.values.delete(k);
  }

  async close(): Promise<void> {}
}
