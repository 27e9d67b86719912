/** PriorityGate: low-priority callers wait while high-priority work is in flight, never longer than the bound. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PriorityGate } from '../../src/util/priority-gate.js';

const settled = async (p: Promise<unknown>): Promise<boolean> => {
  let done = false;
  void p.then(() => (done = true));
  // Two event-loop turns: the gate resumes waiters from setImmediate.
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  return done;
};

test('idle() resolves at once with nothing in flight, and waits for leave() otherwise', async () => {
  const g = new PriorityGate(60_000);
  assert.ok(await settled(g.idle()));
  g.enter();
  g.enter();
  const waiting = g.idle();
  assert.not.ok(await settled(waiting));
  g.leave();
  assert.not.ok(await settled(waiting), 'one engine call is still in flight');
  g.leave();
  assert.ok(await settled(waiting));
  assert.is(g.deferred, 1);
});

test('waiters resume in order, a few per turn, and stop resuming when high-priority work starts again', async () => {
  const g = new PriorityGate(60_000);
  g.enter();
  const order: number[] = [];
  const all = Array.from({ length: 40 }, (_, i) => g.idle().then(() => order.push(i)));
  g.leave();
  await new Promise((r) => setImmediate(r));
  assert.is(order.length, 16, 'one batch per event-loop turn');
  g.enter();
  await new Promise((r) => setImmediate(r));
  await new Promise((r) => setImmediate(r));
  assert.is(order.length, 16, 'an engine call that arrived holds the rest');
  g.leave();
  await Promise.all(all);
  assert.equal(order, Array.from({ length: 40 }, (_, i) => i));
});

test('a wait never exceeds maxDeferMs', async () => {
  const g = new PriorityGate(20);
  g.enter();
  await g.idle();
  assert.is(g.deferred, 1);
  g.leave();
});

test.run();
