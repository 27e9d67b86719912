/** Choosing loopback ports for a devnet: the preferred port when free, else a distinct free one. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PORT_RANGE_FIRST, PORT_RANGE_LAST, anyFreePort, choosePorts, portFree, reservePort } from '../../src/devnet/ports.js';

// Reservations of this file go to a directory of its own, so they never meet other files' ports.
const reservations = mkdtempSync(join(tmpdir(), 'svc-ports-test-'));
process.env.SVC_PORT_RESERVATIONS = reservations;
process.once('exit', () => rmSync(reservations, { recursive: true, force: true }));

/** A port the kernel just called free (bound to 0 and released), not reserved by anyone. */
function kernelFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

function inRange(p: number): boolean {
  return p >= PORT_RANGE_FIRST && p <= PORT_RANGE_LAST;
}

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
  const a = await kernelFreePort();
  let b = await kernelFreePort();
  while (b === a) b = await kernelFreePort();
  assert.equal(await choosePorts([a, b]), [a, b]);
  // A port this process chose before is still its own to prefer (a devnet prepared again).
  assert.equal(await choosePorts([a]), [a]);
  // But a scan never hands it out again.
  const scanned = await anyFreePort('127.0.0.1');
  assert.ok(scanned !== a && scanned !== b);
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
    const free = await kernelFreePort();
    const chosen = await choosePorts([t1!, free, t2!]);
    assert.is(chosen.length, 3);
    assert.is(chosen[1], free);
    assert.ok(chosen[0] !== t1 && chosen[2] !== t2);
    assertDistinct(chosen);
    for (const p of chosen) assertValidPort(p);
  });
});

test('choosePorts never returns a port twice, even for repeated preferences', async () => {
  const p = await kernelFreePort();
  const chosen = await choosePorts([p, p, p]);
  assert.is(chosen[0], p);
  assert.is(chosen.length, 3);
  assertDistinct(chosen);
});

test('choosePorts: 0 and negative preferences get distinct ports below the ephemeral range, none of them a preferred one', async () => {
  const p = await kernelFreePort();
  const preferred = [0, -1, p, 0, 0];
  const chosen = await choosePorts(preferred);
  assert.is(chosen.length, preferred.length);
  assert.is(chosen[2], p);
  assertDistinct(chosen);
  for (const q of chosen) assertValidPort(q);
  for (const i of [0, 1, 3, 4]) assert.ok(inRange(chosen[i]!), `${chosen[i]} is outside ${PORT_RANGE_FIRST}-${PORT_RANGE_LAST}`);
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

test('anyFreePort never hands out the same port twice in one process', async () => {
  const ports: number[] = [];
  for (let i = 0; i < 50; i++) ports.push(await anyFreePort());
  assertDistinct(ports);
  for (const p of ports) assert.ok(inRange(p), `${p} is outside ${PORT_RANGE_FIRST}-${PORT_RANGE_LAST}`);
});

test('a port reserved by a live process is not chosen by another; a dead one\'s reservation is taken over', async () => {
  const port = await anyFreePort();
  // Another process tries the same port while we are alive.
  const script = `import('${new URL('../../src/devnet/ports.js', import.meta.url).href}').then((m) => console.log(JSON.stringify({ reserved: m.reservePort(${port}) })))`;
  const other = spawnSync(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env }, encoding: 'utf8' });
  assert.is(other.status, 0, other.stderr);
  assert.is(JSON.parse(other.stdout).reserved, false, 'our live reservation stops the other process');
  // A reservation left by a process that has exited is stale and can be taken.
  const dead = spawn(process.execPath, ['-e', '']);
  const deadPid = dead.pid!;
  await new Promise((r) => dead.once('exit', r));
  const stalePort = await kernelFreePort();
  writeFileSync(join(reservations, String(stalePort)), String(deadPid));
  assert.is(reservePort(stalePort), true, 'a dead pid\'s reservation is taken over');
  assert.is(readFileSync(join(reservations, String(stalePort)), 'utf8'), String(process.pid));
  assert.is(reservePort(stalePort), false, 'and is then ours: not handed out twice');
  assert.is(reservePort(stalePort, true), true, 'unless we ask to reuse our own');
});

test.run();
