/**
 * stopOnSignal (src/cli/node-setup.ts), the shutdown step of the `svc node …` commands: the first
 * SIGINT or SIGTERM logs `shutting down`, runs stop once, and resolves when it settles; a failed
 * stop resolves too, logged as `shutdown failed` only when asked. Signals are emitted on
 * `process` (its listeners run as for a delivered signal, without one being sent).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { stopOnSignal } from '../../src/cli/node-setup.js';
import { captureLog } from '../helpers/log.js';

/** Removes the signal handlers added since `before` (the other signal's handler outlives the first signal). */
function removeAdded(before: { int: Function[]; term: Function[] }): void {
  for (const l of process.listeners('SIGINT')) if (!before.int.includes(l)) process.off('SIGINT', l);
  for (const l of process.listeners('SIGTERM')) if (!before.term.includes(l)) process.off('SIGTERM', l);
}

test('SIGTERM: logs the signal, stops once, resolves after stop; the handlers are removed', async () => {
  const { log, lines } = captureLog();
  const before = { int: process.listeners('SIGINT'), term: process.listeners('SIGTERM') };
  let stops = 0;
  let stopped = false;
  const waiting = stopOnSignal(
    log,
    async () => {
      stops++;
      await new Promise((r) => setTimeout(r, 20));
      stopped = true;
    },
    { logFailure: true },
  );
  assert.is(process.listenerCount('SIGTERM'), before.term.length + 1);
  process.emit('SIGTERM', 'SIGTERM');
  await waiting;
  assert.ok(stopped, 'resolved only after stop settled');
  assert.is(stops, 1);
  assert.equal(lines.map((l) => [l.level, l.msg, l.fields]), [['info', 'shutting down', { signal: 'SIGTERM' }]]);
  assert.is(process.listenerCount('SIGTERM'), before.term.length, 'the SIGTERM handler ran once and is gone');
  removeAdded(before);
});

test('SIGINT with a failing stop: resolves, and logs the failure only with logFailure', async () => {
  for (const logFailure of [true, false]) {
    const before = { int: process.listeners('SIGINT'), term: process.listeners('SIGTERM') };
    const { log, lines } = captureLog();
    const waiting = stopOnSignal(log, () => Promise.reject(new Error('disk gone')), { logFailure });
    process.emit('SIGINT', 'SIGINT');
    await waiting;
    const expected: unknown[] = [['info', 'shutting down', { signal: 'SIGINT' }]];
    if (logFailure) expected.push(['error', 'shutdown failed', { error: 'disk gone' }]);
    assert.equal(lines.map((l) => [l.level, l.msg, l.fields]), expected);
    removeAdded(before);
  }
});

test.run();
