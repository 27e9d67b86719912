/**
 * A call thread (call-pool.ts): runs eth_call and eth_estimateGas jobs with the VM, off the
 * execution node's main thread. The state comes from the main thread one StateSource read at a
 * time (protocol.ts): the thread posts the read on its read port, blocks in Atomics.wait until the
 * main thread has posted the answer, and takes it with receiveMessageOnPort. A View over that
 * source journals the call's own writes exactly as the main thread's would.
 */
import { type MessagePort, parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { SvcError } from '../../../core/errors.js';
import { ExecutionError } from '../errors.js';
import { backendFromEnv, initSignatureBackend } from '../../../core/crypto/mldsa.js';
import { CallFailedError, ContractReader } from '../api/contracts.js';
import type { NodeRef } from '../state/trie.js';
import { type AccountEntry, type StateSource, View } from '../state/view.js';
import { intrinsicGas, runContractTx } from '../../../vm/index.js';
import { ByteCache } from '../../../util/byte-cache.js';
import { toHex } from '../../../core/codec/bytes.js';
import { type CallAnswer, type CallJob, READ_DONE, READ_IDLE, type ReadAnswer, type ReadRequest, type WireError } from './protocol.js';

const { flag, readPort } = workerData as { flag: Int32Array; readPort: MessagePort };

/** An error as it crosses to the main thread (call-pool.ts rebuilds the typed error). */
function toWire(err: unknown): WireError {
  if (err instanceof CallFailedError) return { name: err.name, code: err.code, message: err.message, failed: { result: err.result, reverted: err.reverted } };
  if (err instanceof SvcError) return { name: err.name, code: err.code, message: err.message };
  return { name: 'Error', code: 'INTERNAL', message: err instanceof Error ? err.message : String(err) };
}

/** One synchronous read from the main thread. */
function ask(req: ReadRequest): AccountEntry | Uint8Array | undefined {
  Atomics.store(flag, 0, READ_IDLE);
  readPort.postMessage(req);
  // The main thread answers between its own tasks; a block import in progress only delays it.
  while (Atomics.load(flag, 0) !== READ_DONE) Atomics.wait(flag, 0, READ_IDLE, 1_000);
  // The flag is set after the answer was posted; the message may take a moment longer to arrive.
  let answer: ReadAnswer | undefined;
  while (!(answer = receiveMessageOnPort(readPort)?.message as ReadAnswer | undefined));
  if ('error' in answer) throw new SvcError(answer.error.code, answer.error.message);
  return answer.value;
}

/**
 * Code is content-addressed and never changes under its hash, so this thread keeps what it read
 * (bounded by bytes): a call that enters the same callee again, or an estimate's next run, does
 * not make the main thread copy it over again. Absent code is not kept: it may be deployed later.
 */
const CALL_THREAD_CODE_BYTES = 32 * 1024 * 1024;
const codes = new ByteCache<Uint8Array>(CALL_THREAD_CODE_BYTES, (c) => c.byteLength + 64);

/** `read` of code by hash through the thread's cache. */
function cachedCode(kind: 'code' | 'instrumented', codeHash: Uint8Array): Uint8Array | undefined {
  const key = `${kind}:${toHex(codeHash)}`;
  const hit = codes.get(key);
  if (hit) return hit;
  const value = ask({ op: kind, codeHash }) as Uint8Array | undefined;
  if (value) codes.set(key, value);
  return value;
}

/**
 * The committed state at one job's block, read through the main thread. A state root's accounts
 * and slots never change, so within a job each is asked once: an estimate's runs (up to
 * ESTIMATE_MAX_RUNS) read the same ones again. Bounded by the job: every read costs gas.
 */
function jobSource(): StateSource {
  const accounts = new Map<string, AccountEntry>();
  const slots = new Map<string, Uint8Array | undefined>();
  return {
    account: (root: NodeRef, address: string) => {
      const key = `${root.version}:${toHex(root.hash)}:${address}`;
      let e = accounts.get(key);
      if (!e) accounts.set(key, (e = ask({ op: 'account', root, address }) as AccountEntry));
      return e;
    },
    storage: (address: string, storageRoot: NodeRef, key: Uint8Array) => {
      const k = `${address}:${storageRoot.version}:${toHex(storageRoot.hash)}:${toHex(key)}`;
      if (slots.has(k)) return slots.get(k);
      const v = ask({ op: 'storage', address, storageRoot, key }) as Uint8Array | undefined;
      slots.set(k, v);
      return v;
    },
    code: (codeHash: Uint8Array) => cachedCode('code', codeHash),
    instrumented: (codeHash: Uint8Array) => cachedCode('instrumented', codeHash),
  };
}

// The ML-DSA host function verifies in this thread, with the backend the main thread chose.
await initSignatureBackend(backendFromEnv(), () => undefined);

parentPort!.on('message', (job: CallJob) => {
  const remote = jobSource();
  const reader = new ContractReader(
    {
      stateView: () => Promise.resolve(new View(remote, job.root)),
      proof: () => Promise.reject(new ExecutionError('INTERNAL', 'a call thread serves no proofs')),
      run: runContractTx,
      intrinsicGas,
    },
    job.maxGas,
  );
  const done = (answer: CallAnswer): void => parentPort!.postMessage(answer);
  const run = job.op === 'call' ? reader.call(job.block, job.req).then((call) => done({ id: job.id, call })) : reader.estimateGas(job.block, job.req).then((estimate) => done({ id: job.id, estimate }));
  run.catch((err: unknown) => done({ id: job.id, error: toWire(err) }));
});
parentPort!.postMessage({ ready: true });
