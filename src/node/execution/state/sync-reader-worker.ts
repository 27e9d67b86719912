/**
 * The state reader thread (sync-reader.ts): opens the execution LevelDB with `multithreading`,
 * answers one key at a time, and signals the blocked main thread through the shared flag.
 */
import { workerData, type MessagePort } from 'node:worker_threads';
import { ClassicLevel } from 'classic-level';

const { location, flag, port } = workerData as { location: string; flag: Int32Array; port: MessagePort };
const DONE = 1;
const DEAD = 2;

// Whatever ends this thread, the main thread must stop waiting.
process.on('exit', () => {
  Atomics.store(flag, 0, DEAD);
  Atomics.notify(flag, 0);
});

const db = new ClassicLevel<string, Uint8Array>(location, { keyEncoding: 'utf8', valueEncoding: 'view', multithreading: true } as never);
try {
  await db.open();
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ error: (err as { cause?: Error }).cause?.message ?? (err as Error).message });
  process.exit(1);
}

port.on('message', (m: { id: number; key: string; exit?: true; close?: true }) => {
  if (m.exit) process.exit(3);
  if (m.close) {
    void db.close().finally(() => process.exit(0));
    return;
  }
  db.get(m.key).then(
    (value) => answer({ id: m.id, value }),
    (err: Error) => answer({ id: m.id, error: err.message }),
  );
});

function answer(msg: { id: number; value?: Uint8Array; error?: string }): void {
  port.postMessage(msg);
  Atomics.store(flag, 0, DONE);
  Atomics.notify(flag, 0);
}
