/**
 * Builds RANDAO chains for a validator process in one worker thread, so that 64 keys' chains
 * (65,536 hashes each on the devnet) use the other core instead of the event loop that proposes
 * and attests. Jobs run in the order asked; the process asks for its keys one after another and a
 * proposal asks for its own key's chain, so a proposal waits for at most the chain in progress.
 * If the worker cannot run (or dies), chains are built on the main thread in slices instead.
 */
import { Worker } from 'node:worker_threads';
import { RandaoChain } from './chain.js';

interface Pending {
  seed: Uint8Array;
  length: number;
  bits: number;
  generation: number;
  resolve: (c: RandaoChain) => void;
  reject: (err: Error) => void;
}

/** A worker thread building RANDAO chains on request. */
export class RandaoChainBuilder {
  private worker: Worker | undefined;
  private failed = false;
  private nextId = 0;
  private readonly pending = new Map<number, Pending>();

  /** The chain of `generation` for the key `seed`, built in the worker (or in slices if it failed). */
  build(seed: Uint8Array, length: number, bits: number, generation: number): Promise<RandaoChain> {
    if (this.failed) return RandaoChain.build(seed, length, bits, generation);
    const worker = this.start();
    const id = this.nextId++;
    return new Promise<RandaoChain>((resolve, reject) => {
      this.pending.set(id, { seed, length, bits, generation, resolve, reject });
      worker.postMessage({ id, seed, length, bits, generation });
    });
  }

  /** Stops the worker; chains asked for afterwards are built on the main thread. */
  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    this.failed = true;
    if (w) await w.terminate();
    this.fallBack();
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./worker.js', import.meta.url));
    // Never what keeps the process alive: stop() and signals end it as before.
    w.unref();
    w.on('message', (msg: { id: number; bytes?: Uint8Array; error?: string }) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      this.pending.delete(msg.id);
      const chain = msg.bytes && RandaoChain.restore(p.seed, p.length, p.bits, p.generation, new Uint8Array(msg.bytes));
      if (chain) p.resolve(chain);
      else p.reject(new Error(`RANDAO chain worker: ${msg.error ?? 'answered a chain that does not check'}`));
    });
    const down = () => {
      if (this.worker !== w) return;
      this.worker = undefined;
      this.failed = true;
      this.fallBack();
    };
    w.once('error', down);
    w.once('exit', down);
    this.worker = w;
    return w;
  }

  // What the worker did not answer is built here instead.
  private fallBack(): void {
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      RandaoChain.build(p.seed, p.length, p.bits, p.generation).then(p.resolve, p.reject);
    }
  }
}
