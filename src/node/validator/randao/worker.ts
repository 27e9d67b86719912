/** Worker thread body: builds RANDAO chains (n hashes each) off the validator client's event loop. */
import { parentPort } from 'node:worker_threads';
import { RandaoChain } from './chain.js';

/** One chain to build; the answer carries `id` and the chain's `serialize()` bytes, or an error. */
interface Job {
  id: number;
  seed: Uint8Array;
  length: number;
  bits: number;
  generation: number;
}

parentPort!.on('message', (j: Job) => {
  try {
    const bytes = new RandaoChain(j.seed, j.length, j.bits, j.generation).serialize();
    parentPort!.postMessage({ id: j.id, bytes });
  } catch (err) {
    parentPort!.postMessage({ id: j.id, error: (err as Error).message });
  }
});
