/** Choosing loopback ports for a devnet: the preferred port when free, else a distinct free one. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createServer, type Server } from 'node:net';
import { anyFreePort, choosePorts, portFree } from '../../src/devnet/ports.js';

/** A server listening on `port` (0: any) of `host`, so the port is taken until it is closed. */
function occupy(port = 0, host = '127.0.0.1'): Promise<{ server: Server; port: number }> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, host, () => resolve({ server, port: (server.address() as { port: number }).port }));
  });
}

function release(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Runs `fn` with `count` ports taken on 127.0.0.1, released afterwards. */
async function withTaken<T>(count: number, fn: (ports: number[]) => Promise<T>, host = '127.0.0.1'): Promise<T> {
  const held: Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const o = await occupy(0, host);
      held.push(o.server);
      ports.push(o.port);
    }
    return await fn(ports);
  } finally {
    for (const s of held) await release(s);
  }
}

function assertDistinct(ports: readonly number[]): void {
  assert.is(new Set(ports).size, ports.length, `duplicates in ${ports.join(', ')}`);
}

function assertValidPort(p: number | undefined): void {
  assert.ok(Number.isInteger(p) && p! > 0 && p! < 65536, `not a port: ${p}`);
}

test('anyFreePort returns a bindable port; portFree tells free from taken', async () => {
  const p = await anyFreePort();
  assertValidPort(p);
  assert.is(await portFree(p), true);
  await withTaken(1, async ([taken]) => {
    assert.is(await portFree(taken!), false);
  });
});

test('choosePorts of nothing is nothing', async () => {
  assert.equal(await choosePorts([]), []);
});

test('choosePorts returns the preferred ports when they are free', async () => {
  const a = await anyFreePort();
  let b = await anyFreePort();
  while (b === a) b = await anyFreePort();
  assert.equal(await choosePorts([a]), [a]);
  assert.equal(await choosePorts([a, b]), [a, b]);
});

test('choosePorts replaces a taken preferred port with a different free one', async () => {
  await withTaken(1, async ([taken]) => {
    const [chosen] = await choosePorts([taken!]);
    assertValidPort(chosen);
    assert.is.not(chosen, taken);
    assert.is(await portFree(chosen!), true, 'the replacement can be bound');
  });
});

test('choosePorts avoids a port taken on the wildcard address', async () => {
  await withTaken(
    1,
    async ([taken]) => {
      assert.is(await portFree(taken!), false);
      const [chosen] = await choosePorts([taken!]);
      assert.is.not(chosen, taken);
    },
    '0.0.0.0',
  );
});

test('choosePorts keeps free preferred ports in place around taken ones', async () => {
  await withTaken(2, async ([t1, t2]) => {
    const free = await anyFreePort();
    const chosen = await choosePorts([t1!, free, t2!]);
    assert.is(chosen.length, 3);
    assert.is(chosen[1], free);
    assert.ok(chosen[0] !== t1 && chosen[2] !== t2);
    assertDistinct(chosen);
    for (const p of chosen) assertValidPort(p);
  });
});

test('choosePorts never returns a port twice, even for repeated preferences', async () => {
  const p = await anyFreePort();
  const chosen = await choosePorts([p, p, p]);
  assert.is(chosen[0], p);
  assert.is(chosen.length, 3);
  assertDistinct(chosen);
});

test('choosePorts: 0 and negative preferences get distinct ephemeral ports, none of them a preferred one', async () => {
  const p = await anyFreePort();
  const preferred = [0, -1, p, 0, 0];
  const chosen = await choosePorts(preferred);
  assert.is(chosen.length, preferred.length);
  assert.is(chosen[2], p);
  assertDistinct(chosen);
  for (const q of chosen) assertValidPort(q);
});

test('choosePorts: a devnet-sized request with every preferred port taken', async () => {
  await withTaken(7, async (taken) => {
    const chosen = await choosePorts(taken);
    assert.is(chosen.length, taken.length);
    assertDistinct(chosen);
    for (const q of chosen) {
      assertValidPort(q);
      assert.ok(!taken.includes(q), `${q} is taken`);
    }
  });
});

test.run();
