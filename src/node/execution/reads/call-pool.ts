/**
 * eth_call and eth_estimateGas off the main thread. A read-only call runs the VM for up to the
 * block gas cap (an estimate several times), and on the main thread that stalled block import,
 * newPayload and /health for as long; here it runs on a call thread (call-worker.ts) while the
 * main thread only answers its state reads. The queue is bounded, per client too, and a call that
 * outlives its time budget ends its thread: each refusal is a CallLimitError with a clear message.
 * None of this decides a block's outcome: blocks still run on the main thread, bounded by gas.
 */
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { SvcError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import { CallFailedError, type CallOffload, type CallRequest } from '../api/contracts.js';
import type { NodeRef } from '../state/trie.js';
import type { StateSource } from '../state/view.js';
import type { ContractTxResult } from '../../../vm/index.js';
import { type CallAnswer, type CallBlock, type CallJob, READ_DONE, type ReadAnswer, type ReadRequest, type WireError } from './protocol.js';

/** A call refused or ended by the pool's limits (busy, per-client cap, time budget). */
export class CallLimitError extends ExecutionError {}

/** What the pool needs of the chain: a readable block's state source and root. */
export interface CallStateSource {
  stateSource(blockHash: string): Promise<{ source: StateSource; root: NodeRef }>;
}

/** Limits of the pool; defaults in DEFAULT_CALL_POOL. */
export interface CallPoolOptions {
  /** Call threads (each runs one call at a time). */
  threads: number;
  /** Most calls queued or running in all. */
  maxQueued: number;
  /** Most calls queued or running for one client (IP). */
  maxQueuedPerClient: number;
  /** Wall-clock budget of one call or estimate, ms (geth's RPC EVM timeout is 5 s). */
  timeoutMs: number;
}

/** One call thread: on a 2-core machine the other core stays with the main thread. */
export const DEFAULT_CALL_POOL: CallPoolOptions = { threads: 1, maxQueued: 64, maxQueuedPerClient: 8, timeoutMs: 5_000 };

interface Pending {
  job: CallJob;
  source: StateSource;
  resolve: (a: CallAnswer) => void;
  reject: (e: Error) => void;
}

/** A call thread and what it runs now. */
interface Thread {
  worker: Worker;
  readPort: MessagePort;
  flag: Int32Array;
  ready: Promise<void>;
  current?: { pending: Pending; timer?: NodeJS.Timeout };
}

function fromWire(e: WireError): SvcError {
  if (e.failed) return new CallFailedError(e.failed.result, e.failed.reverted);
  return new SvcError(e.code, e.message);
}

/** Runs read-only calls on call threads; the main thread answers their state reads. */
export class CallPool implements CallOffload {
  private readonly threads: Thread[] = [];
  private readonly queue: Pending[] = [];
  private readonly perClient = new Map<string, number>();
  private next = 0;
  /** Calls accepted and not yet answered (resolving their block, queued or running). */
  private admitted = 0;
  private closed = false;

  constructor(
    private readonly chain: CallStateSource,
    private readonly maxGas: bigint,
    private readonly opts: CallPoolOptions = DEFAULT_CALL_POOL,
  ) {}

  /** eth_call on a call thread: the result, or CallFailedError for a status-0 run. */
  async call(block: CallBlock, req: CallRequest, client = ''): Promise<ContractTxResult> {
    const a = await this.submit('call', block, req, client);
    return (a as { call: ContractTxResult }).call;
  }

  /** eth_estimateGas on a call thread. */
  async estimateGas(block: CallBlock, req: CallRequest, client = ''): Promise<bigint> {
    const a = await this.submit('estimate', block, req, client);
    return (a as { estimate: bigint }).estimate;
  }

  /** Ends every call thread; queued and running calls fail. */
  async close(): Promise<void> {
    this.closed = true;
    for (const p of this.queue.splice(0)) p.reject(new CallLimitError('CALLS_CLOSED', 'the node is shutting down'));
    await Promise.all(this.threads.splice(0).map((t) => this.end(t, new CallLimitError('CALLS_CLOSED', 'the node is shutting down'))));
  }

  private async submit(op: CallJob['op'], block: CallBlock, req: CallRequest, client: string): Promise<CallAnswer> {
    if (this.closed) throw new CallLimitError('CALLS_CLOSED', 'the node is shutting down');
    if (this.admitted >= this.opts.maxQueued) throw new CallLimitError('CALLS_BUSY', `too many calls in progress (${this.opts.maxQueued}); try again shortly`);
    const mine = this.perClient.get(client) ?? 0;
    if (mine >= this.opts.maxQueuedPerClient) throw new CallLimitError('CALLS_BUSY', `this client has ${mine} calls in progress, the most one client may have; wait for one to finish`);
    // Counted from here, before any await, so concurrent requests see each other.
    this.admitted++;
    this.perClient.set(client, mine + 1);
    try {
      // Resolved before the job queues: an unknown or pruned block fails as it always did.
      const { source, root } = await this.chain.stateSource(block.hash);
      const job: CallJob = { id: ++this.next, op, block: { hash: block.hash, index: block.index, timestamp: block.timestamp }, root, req: { from: req.from, to: req.to, value: req.value, data: req.data, ...(req.gas === undefined ? {} : { gas: req.gas }) }, maxGas: this.maxGas };
      return await new Promise<CallAnswer>((resolve, reject) => {
        this.queue.push({ job, source, resolve, reject });
        this.dispatch();
      });
    } finally {
      this.admitted--;
      const n = (this.perClient.get(client) ?? 1) - 1;
      if (n <= 0) this.perClient.delete(client);
      else this.perClient.set(client, n);
    }
  }

  /** Hands queued calls to idle threads, starting threads up to the configured number. */
  private dispatch(): void {
    while (this.queue.length > 0 && !this.closed) {
      let t = this.threads.find((x) => !x.current);
      if (!t) {
        if (this.threads.length >= this.opts.threads) return;
        t = this.spawn();
      }
      const pending = this.queue.shift()!;
      const thread = t;
      thread.current = { pending };
      void thread.ready.then(
        () => {
          if (thread.current?.pending !== pending) return;
          // The budget counts from the hand-over: a thread's start-up is not the call's time.
          thread.current.timer = setTimeout(() => {
            const secs = (this.opts.timeoutMs / 1000).toLocaleString('en-US');
            void this.end(thread, new CallLimitError('CALL_TIMEOUT', `execution aborted: the call ran past its ${secs} s time budget (it may need a smaller gas limit)`));
          }, this.opts.timeoutMs);
          thread.worker.postMessage(pending.job);
        },
        (err: Error) => this.end(thread, err),
      );
    }
  }

  private spawn(): Thread {
    const { port1, port2 } = new MessageChannel();
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const worker = new Worker(new URL('./call-worker.js', import.meta.url), { workerData: { flag, readPort: port2 }, transferList: [port2] });
    let ready!: () => void;
    let failed!: (e: Error) => void;
    const t: Thread = { worker, readPort: port1, flag, ready: new Promise<void>((res, rej) => ((ready = res), (failed = rej))) };
    t.ready.catch(() => undefined);
    port1.on('message', (req: ReadRequest) => this.answerRead(t, req));
    worker.on('message', (m: { ready: true } | CallAnswer) => {
      if ('ready' in m) return ready();
      const cur = t.current;
      if (!cur || cur.pending.job.id !== m.id) return;
      clearTimeout(cur.timer);
      t.current = undefined;
      if ('error' in m) cur.pending.reject(fromWire(m.error));
      else cur.pending.resolve(m);
      this.dispatch();
    });
    worker.on('error', (err) => failed(err));
    worker.on('exit', (code) => {
      failed(new ExecutionError('CALL_THREAD_FAILED', `call thread exited with code ${code}`));
      void this.end(t, new ExecutionError('CALL_THREAD_FAILED', `the call thread stopped (exit code ${code}) while running this call`));
    });
    // An idle pool must not keep the process alive.
    worker.unref();
    port1.unref();
    this.threads.push(t);
    return t;
  }

  /** Answers one state read of the thread's current call from the main thread's state database. */
  private answerRead(t: Thread, req: ReadRequest): void {
    const source = t.current?.pending.source;
    let answer: ReadAnswer;
    try {
      if (!source) throw new ExecutionError('CALL_THREAD_FAILED', 'a state read arrived with no call running');
      answer = { value: read(source, req) };
    } catch (err) {
      answer = { error: err instanceof SvcError ? { name: err.name, code: err.code, message: err.message } : { name: 'Error', code: 'INTERNAL', message: (err as Error).message } };
    }
    t.readPort.postMessage(answer);
    Atomics.store(t.flag, 0, READ_DONE);
    Atomics.notify(t.flag, 0);
  }

  /** Stops a thread (a call past its budget, a crash, shutdown): its call fails with `err`; the pool starts a fresh thread when work comes. */
  private async end(t: Thread, err: Error): Promise<void> {
    const i = this.threads.indexOf(t);
    if (i >= 0) this.threads.splice(i, 1);
    const cur = t.current;
    t.current = undefined;
    if (cur) {
      clearTimeout(cur.timer);
      cur.pending.reject(err);
    }
    t.readPort.close();
    await t.worker.terminate().catch(() => undefined);
    this.dispatch();
  }
}

function read(source: StateSource, req: ReadRequest): ReturnType<StateSource['account']> | Uint8Array | undefined {
  switch (req.op) {
    case 'account':
      return source.account(req.root, req.address);
    case 'storage':
      return source.storage(req.address, req.storageRoot, req.key);
    case 'code':
      return source.code(req.codeHash);
    case 'instrumented':
      return source.instrumented(req.codeHash);
  }
}
