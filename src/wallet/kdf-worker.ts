/** Worker thread body: Argon2id is memory-hard and blocks for hundreds of ms, so it never runs on the main thread. */
import { parentPort, workerData } from 'node:worker_threads';
import { argon2id } from 'hash-wasm';

interface Job {
  password: Uint8Array;
  salt: Uint8Array;
  memory: number;
  iterations: number;
  parallelism: number;
}

const job = workerData as Job;
argon2id({
  password: job.password,
  salt: job.salt,
  memorySize: job.memory,
  iterations: job.iterations,
  parallelism: job.parallelism,
  hashLength: 32,
  outputType: 'binary',
}).then(
  (key) => parentPort!.postMessage({ key }),
  (err: Error) => parentPort!.postMessage({ error: err.message }),
);
