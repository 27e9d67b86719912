/**
 * Worker thread body: builds and writes a devnet genesis. Key derivation and the RANDAO hash
 * chains allocate heavily; done on the supervisor's own thread they would grow its heap for good
 * (~47 MB of RSS for as long as the devnet runs), while a worker's heap is freed when it ends.
 * The RANDAO commitments are computed on a second worker meanwhile.
 */
import { Worker, parentPort, workerData } from 'node:worker_threads';
import { SvcError } from '../core/errors.js';
import { type GenesisPlan, assembleGenesis, deriveGenesisKeys, writeGenesis } from '../genesis/build.js';

/** What the worker is given. */
export interface GenesisJob {
  plan: GenesisPlan;
  outDir: string;
  password: string;
  kdfMemoryKib: number;
}

/** The plan's RANDAO commitments, from a worker of their own (undefined if it fails: the keys' thread computes them then). */
function commitmentsOnWorker(plan: GenesisPlan): Promise<string[] | undefined> {
  return new Promise((resolve) => {
    const worker = new Worker(new URL('./randao-commitments-worker.js', import.meta.url), { workerData: plan });
    worker.once('message', (commitments: string[]) => resolve(commitments));
    worker.once('error', () => resolve(undefined));
    worker.once('exit', () => resolve(undefined));
  });
}

const job = workerData as GenesisJob;
try {
  const commitments = commitmentsOnWorker(job.plan);
  const keys = deriveGenesisKeys(job.plan);
  const built = assembleGenesis(job.plan, keys, await commitments);
  // Slot 0 starts once the chain exists, not when its keys and RANDAO commitments began to be
  // derived: nothing depends on the time but the slot clock, and slots that pass before any
  // process can start are only empty (and cost the first finalised epoch when they span one).
  built.genesis.genesis_time = Math.max(job.plan.genesisTime, Math.floor(Date.now() / 1000));
  await writeGenesis(job.outDir, built, job.plan.mnemonic, job.password, { force: false, kdfMemoryKib: job.kdfMemoryKib });
  parentPort!.postMessage({ genesis: built.genesis });
} catch (err) {
  parentPort!.postMessage({ error: { code: err instanceof SvcError ? err.code : 'GENESIS_FAILED', message: (err as Error).message } });
}
