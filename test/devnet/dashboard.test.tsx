/**
 * The devnet dashboard: its text formatters, the ink component's frames for hand-built views
 * (ink-testing-library), and renderDashboard redrawing a fake TTY when its source changes.
 * Waits are event-driven with a deadline; no fixed sleeps.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { PassThrough } from 'node:stream';
import { render, cleanup } from 'ink-testing-library';
import { Dashboard, EVENT_ROWS, TABLE_ROWS } from '../../src/devnet/dashboard.js';
import { renderDashboard, type DashboardSource } from '../../src/devnet/dashboard-app.js';
import { clockTime, formatBalance, isDown, mempoolText, nodeStatusText, shortAddress, shortHash, statusColor } from '../../src/devnet/dashboard-format.js';
import type { DevnetView, ProcessStatus } from '../../src/devnet/view.js';

const WEI = 10n ** 18n;

/** Drops ANSI escapes (colours, cursor moves, erases), so frames compare as plain text whatever FORCE_COLOR says. */
function plain(s: string): string {
  return s.replace(/\u001B\[[0-9;?<>=]*[A-Za-z]/g, '');
}

function frameOf(r: { lastFrame(): string | undefined }): string {
  return plain(r.lastFrame() ?? '');
}

/** A four-validator devnet at slot 42, every process healthy. */
function baseView(): DevnetView {
  const dir = '/tmp/svc-devnet-test';
  return {
    dir,
    chainId: 'svc-devnet',
    endpoints: { execution: 'http://127.0.0.1:8546', rpc: 'http://127.0.0.1:8545', beacon: 'http://127.0.0.1:8080', ws: 'ws://127.0.0.1:8080/ws' },
    slot: 42,
    epoch: 5,
    head: { slot: 41, index: 40, root: '0x' + 'ab12'.repeat(16) },
    justifiedEpoch: 4,
    finalizedEpoch: 3,
    mempool: { pending: 3, queued: 1 },
    peers: 0,
    nodes: [{ index: 0, role: 'producer', validators: [0, 1, 2, 3], head: { slot: 41, index: 40, root: '0x' + 'ab12'.repeat(16) }, finalized_epoch: 3, peers: { beacon: 0, execution: 0 } }],
    processes: ['execution', 'beacon', 'validator-0', 'validator-1'].map((name, i) => ({ name, pid: 1000 + i, status: 'healthy' as const, restarts: 0, log: `${dir}/logs/${name}.log` })),
    validators: [0, 1, 2, 3].map((index) => ({
      index,
      address: '0x' + `${index}`.repeat(4) + '00'.repeat(16) + 'beef',
      proposed: index * 2,
      attested: 10 + index,
      balance: (32n * WEI + BigInt(index) * 123456789012345678n).toString(),
    })),
    events: [{ time: '2025-01-02T03:04:05.678Z', kind: 'started', text: 'devnet started' }],
  };
}

/** The frame's line that contains `needle`, or a failed assertion listing the frame. */
function lineWith(frame: string, needle: string): string {
  const line = frame.split('\n').find((l) => l.includes(needle));
  assert.ok(line !== undefined, `no line with ${JSON.stringify(needle)} in:\n${frame}`);
  return line;
}

test.after.each(() => {
  cleanup();
});

// ---- formatters ----

test('formatBalance: wei to tokens with 4 decimals, truncated, exact for any size', () => {
  assert.is(formatBalance('0'), '0.0000');
  assert.is(formatBalance(0n), '0.0000');
  assert.is(formatBalance('1'), '<0.0001', 'one wei is not shown as an empty balance');
  assert.is(formatBalance(10n ** 14n - 1n), '<0.0001');
  assert.is(formatBalance(10n ** 14n), '0.0001');
  assert.is(formatBalance(WEI), '1.0000');
  assert.is(formatBalance(WEI.toString()), '1.0000');
  assert.is(formatBalance('1500000000000000000'), '1.5000');
  assert.is(formatBalance(WEI - 1n), '0.9999', 'truncates, never rounds up to a token the account does not have');
  assert.is(formatBalance(123456789n * WEI + 987654321987654321n), '123456789.9876');
  // 2^256 - 1 wei: far beyond 2^53, so any float on the way would lose the low digits.
  const max = 2n ** 256n - 1n;
  assert.is(formatBalance(max), `${max / WEI}.${(max % WEI).toString().padStart(18, '0').slice(0, 4)}`);
  assert.is(formatBalance(max), '115792089237316195423570985008687907853269984665640564039457.5840');
  assert.is(formatBalance(10n ** 30n), '1000000000000.0000');
});

test('formatBalance: other precisions and rejected inputs', () => {
  assert.is(formatBalance(1n, 18), '0.000000000000000001');
  assert.is(formatBalance(1234n * WEI + 5n, 0), '1234');
  assert.is(formatBalance(1n, 0), '<1');
  assert.is(formatBalance(1n, 2), '<0.01');
  for (const bad of ['', '0x10', ' 1', '1.5', '-1', '1e18']) {
    assert.throws(() => formatBalance(bad), RangeError, `accepted ${JSON.stringify(bad)}`);
  }
  assert.throws(() => formatBalance(-1n), RangeError);
  assert.throws(() => formatBalance(1n, 19), RangeError);
  assert.throws(() => formatBalance(1n, 1.5), RangeError);
});

test('short hashes, addresses, clock times, status colours, mempool text', () => {
  assert.is(shortHash('0x' + 'ab12'.repeat(16)), '0xab12ab12…');
  assert.is(shortHash('0x1234'), '0x1234');
  assert.is(shortAddress('0x1234' + '00'.repeat(16) + 'abcd'), '0x1234…abcd');
  assert.is(shortAddress('0xabc'), '0xabc');
  assert.is(clockTime('2025-01-02T03:04:05.678Z'), '03:04:05');
  assert.is(clockTime('2025-01-02T23:59:59+02:00'), '21:59:59', 'shown in UTC, like the log files');
  assert.is(clockTime('not a time'), '--:--:--');
  const colours: Record<ProcessStatus, string> = { healthy: 'green', starting: 'yellow', restarting: 'yellow', crashed: 'red', failed: 'red', stopped: 'gray' };
  for (const [status, colour] of Object.entries(colours) as [ProcessStatus, string][]) assert.is(statusColor(status), colour, status);
  assert.equal((Object.keys(colours) as ProcessStatus[]).filter(isDown), ['crashed', 'failed']);
  assert.is(mempoolText(null), 'unreachable');
  assert.is(mempoolText({ pending: 3, queued: 1 }), '3 pending / 1 queued');
});

// ---- the component's frames ----

test('frame: header, endpoints, slot/epoch/head, checkpoints, mempool, peers, footer', () => {
  const r = render(<Dashboard view={baseView()} />);
  const f = frameOf(r);
  assert.match(lineWith(f, 'svc devnet'), /chain svc-devnet\s+dir \/tmp\/svc-devnet-test/);
  assert.match(lineWith(f, 'execution http'), /execution\s+http:\/\/127\.0\.0\.1:8546\s+json-rpc\s+http:\/\/127\.0\.0\.1:8545/);
  assert.match(lineWith(f, 'beacon    http'), /ws\s+ws:\/\/127\.0\.0\.1:8080\/ws/);
  assert.match(lineWith(f, 'slot 42'), /slot 42\s+epoch 5\s+head slot 41 · height 40 · 0xab12ab12…/);
  assert.match(lineWith(f, 'justified'), /justified epoch 4\s+finalized epoch 3\s+mempool 3 pending \/ 1 queued\s+peers 0/);
  assert.ok(f.trimEnd().endsWith('Ctrl-C stops the devnet'), f);
});

test('nodeStatusText: role and validators, head, finality, peers; unknowns as ?', () => {
  const head = { slot: 12, index: 11, root: '0x' + 'ab12'.repeat(16) };
  assert.is(
    nodeStatusText({ role: 'producer', validators: [0, 2], head, finalized_epoch: 2, peers: { beacon: 2, execution: 3 } }),
    'producer (validators 0, 2)  head slot 12 · height 11 · 0xab12ab12…  finalized epoch 2  peers 2 beacon / 3 execution',
  );
  assert.is(nodeStatusText({ role: 'follower', validators: [], head: null, finalized_epoch: null, peers: { beacon: null, execution: 0 } }), 'read-only  head unknown  finalized epoch ?  peers ? beacon / 0 execution');
  assert.is(nodeStatusText({ role: 'producer', validators: [], head: null, finalized_epoch: 0, peers: { beacon: 0, execution: 0 } }).split('  ')[0], 'producer (validators none)');
});

test('frame: a single node has no nodes section; several list each node, followers read-only', () => {
  assert.not.match(frameOf(render(<Dashboard view={baseView()} />)), /\nnodes\n/);
  const view = baseView();
  const head = (slot: number) => ({ slot, index: slot - 1, root: '0x' + 'cd34'.repeat(16) });
  view.nodes = [
    { index: 0, role: 'producer', validators: [0, 2], head: head(41), finalized_epoch: 3, peers: { beacon: 2, execution: 2 } },
    { index: 1, role: 'producer', validators: [1, 3], head: head(41), finalized_epoch: 3, peers: { beacon: 2, execution: 2 } },
    { index: 2, role: 'follower', validators: [], head: null, finalized_epoch: null, peers: { beacon: null, execution: null } },
  ];
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(f, /\nnodes\n/);
  assert.match(lineWith(f, 'NODE'), /^NODE\s+ROLE\s+HEAD SLOT\s+HEIGHT\s+HEAD\s+FINALIZED\s+PEERS B\/E\s+VALIDATORS$/);
  assert.match(lineWith(f, '0, 2'), /^0\s+producer\s+41\s+40\s+0xcd34cd34…\s+3\s+2\/2\s+0, 2$/);
  assert.match(lineWith(f, '1, 3'), /^1\s+producer\s+41\s+40\s+0xcd34cd34…\s+3\s+2\/2\s+1, 3$/);
  assert.match(lineWith(f, 'read-only'), /^2\s+read-only\s+\?\s+\?\s+\?\s+\?\s+\?\/\?\s+-$/);
  for (const line of f.split('\n')) assert.ok(line.length <= 100, `wider than 100 columns: ${line}`);
});

test('frame: the slot advances when the view does (rerender)', () => {
  const view = baseView();
  const r = render(<Dashboard view={view} />);
  assert.match(frameOf(r), /slot 42\s+epoch 5/);
  r.rerender(<Dashboard view={{ ...view, slot: 43, head: { slot: 43, index: 41, root: '0x' + 'cd34'.repeat(16) } }} />);
  assert.match(frameOf(r), /slot 43\s+epoch 5\s+head slot 43 · height 41 · 0xcd34cd34…/);
  assert.not.match(frameOf(r), /slot 42/);
  r.rerender(<Dashboard view={{ ...view, slot: 48, epoch: 6 }} />);
  assert.match(frameOf(r), /slot 48\s+epoch 6/);
  assert.is(r.frames.length >= 3, true, 'one frame per render');
});

test('frame: a crashed process shows its status and its full log path', () => {
  const view = baseView();
  // Long enough that the table's LOG column has to truncate it.
  const log = '/home/someone/projects/a-rather-long-project-name/.svc-devnet/logs/validator-1.log';
  view.processes[3] = { name: 'validator-1', pid: null, status: 'crashed', restarts: 1, log };
  view.processes[1] = { ...view.processes[1]!, status: 'failed', pid: null, restarts: 1 };
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(lineWith(f, 'validator-1  '), /validator-1\s+crashed\s+-\s+1\s+…/);
  assert.match(f, /! validator-1 crashed after 1 restart, log:\n\s+\/home\/someone\/projects\/a-rather-long-project-name\/\.svc-devnet\/logs\/validator-1\.log/);
  assert.match(f, /! beacon failed after 1 restart, log:\n\s+\/tmp\/svc-devnet-test\/logs\/beacon\.log/);
  assert.match(lineWith(f, 'execution  '), /execution\s+healthy\s+1000\s+0\s+\/tmp\/svc-devnet-test\/logs\/execution\.log/);
  assert.not.match(f, /! execution/, 'healthy processes raise no alert');
  for (const line of f.split('\n')) assert.ok(line.length <= 100, `wider than 100 columns: ${line}`);
});

test('frame: a down process beyond the table cut still gets its alert', () => {
  const view = baseView();
  view.processes = Array.from({ length: TABLE_ROWS + 3 }, (_, i) => ({ name: `validator-${i}`, pid: i + 1, status: 'healthy' as const, restarts: 0, log: `/l/validator-${i}.log` }));
  view.processes[TABLE_ROWS + 2]!.status = 'crashed';
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(f, /… 3 more/);
  assert.match(f, new RegExp(`! validator-${TABLE_ROWS + 2} crashed, log:\\n\\s+/l/validator-${TABLE_ROWS + 2}\\.log`));
});

test('frame: mempool null shows unreachable; no head yet; empty lists', () => {
  const view: DevnetView = { ...baseView(), mempool: null, head: null, processes: [], validators: [], events: [] };
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(lineWith(f, 'mempool'), /mempool unreachable\s+peers 0/);
  assert.match(lineWith(f, 'slot 42'), /head none yet/);
  assert.match(f, /processes\nnone yet/);
  assert.match(f, /validators\nnone/);
  assert.match(f, /recent events \(UTC\)\nnone yet/);
});

test('frame: validator table with short addresses and token balances', () => {
  const view = baseView();
  view.validators[2]!.balance = null;
  view.validators[3]!.balance = 'garbage';
  view.validators[1]!.balance = '1';
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(lineWith(f, 'INDEX'), /INDEX\s+ADDRESS\s+PROPOSED\s+ATTESTED\s+BALANCE \(tokens\)/);
  assert.match(lineWith(f, '0x0000…beef'), /^0\s+0x0000…beef\s+0\s+10\s+32\.0000$/);
  assert.match(lineWith(f, '0x1111…beef'), /^1\s+0x1111…beef\s+2\s+11\s+<0\.0001$/);
  assert.match(lineWith(f, '0x2222…beef'), /^2\s+0x2222…beef\s+4\s+12\s+…$/, 'not read yet');
  assert.match(lineWith(f, '0x3333…beef'), /^3\s+0x3333…beef\s+6\s+13\s+\?$/, 'a malformed amount does not crash the dashboard');
});

test('frame: many validators are cut with a count of the rest', () => {
  const view = baseView();
  view.validators = Array.from({ length: 40 }, (_, index) => ({ index, address: `0x${index.toString(16).padStart(40, '0')}`, proposed: 0, attested: 0, balance: '0' }));
  const f = frameOf(render(<Dashboard view={view} />));
  assert.match(f, new RegExp(`\\n${TABLE_ROWS - 1}\\s+0x0000…`));
  assert.not.match(f, new RegExp(`\\n${TABLE_ROWS}\\s+0x0000…`));
  assert.match(f, new RegExp(`… ${40 - TABLE_ROWS} more`));
});

test('frame: only the last events, oldest first, with HH:MM:SS times', () => {
  const view = baseView();
  view.events = Array.from({ length: EVENT_ROWS + 4 }, (_, i) => ({ time: `2025-01-02T10:00:${String(i).padStart(2, '0')}Z`, kind: i === 11 ? 'crash' : 'block', text: `event #${i}` }));
  const f = frameOf(render(<Dashboard view={view} />));
  const lines = f.split('\n').filter((l) => l.includes('event #'));
  assert.is(lines.length, EVENT_ROWS);
  assert.match(lines[0]!, /^10:00:04\s+block\s+event #4$/);
  assert.match(lines[EVENT_ROWS - 1]!, /^10:00:11\s+crash\s+event #11$/);
  assert.not.match(f, /event #3\b/);
});

// ---- renderDashboard on a fake terminal ----

/** In CI ink writes only the final frame, at unmount; this mirrors its is-in-ci check. */
const inkCi = ['CI', 'CONTINUOUS_INTEGRATION'].some((k) => k in process.env && process.env[k] !== '0' && process.env[k] !== 'false');

/** A writable TTY-like stream 100 columns wide that records what is written to it. */
function fakeTerminal() {
  const stream = new PassThrough();
  let written = '';
  const waiters = new Set<() => void>();
  stream.on('data', (chunk: Buffer) => {
    written += chunk.toString('utf8');
    for (const w of waiters) w();
  });
  const stdout = Object.assign(stream, { columns: 100, rows: 60, isTTY: true }) as unknown as NodeJS.WriteStream;
  return {
    stdout,
    text: () => plain(written),
    /** Resolves once the written text matches `re` (after `from` characters), or rejects after 5 s. */
    waitFor(re: RegExp, from = 0): Promise<number> {
      return new Promise((resolve, reject) => {
        const check = () => {
          const at = plain(written).slice(from).search(re);
          if (at < 0) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(from + at);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${re} in:\n${plain(written)}`));
        }, 5000);
        waiters.add(check);
        check();
      });
    },
  };
}

/** A source holding one view; set() replaces it and notifies. */
function memorySource(initial: DevnetView) {
  let view = initial;
  const listeners = new Set<() => void>();
  const source: DashboardSource = {
    current: () => view,
    subscribe(fn) {
      listeners.add(fn);
      return () => listeners.delete(fn);
    },
  };
  return {
    source,
    listeners,
    set(next: DevnetView) {
      view = next;
      for (const fn of listeners) fn();
    },
  };
}

test('renderDashboard: redraws the fake terminal as the slot advances, then unmounts', async () => {
  const term = fakeTerminal();
  const src = memorySource({ ...baseView(), slot: 7, epoch: 0 });
  const handle = renderDashboard(src.source, { stdout: term.stdout });
  try {
    assert.is(src.listeners.size, 1, 'subscribed on mount');
    let at = inkCi ? 0 : await term.waitFor(/slot 7\s+epoch 0/);
    for (const slot of [8, 9]) {
      src.set({ ...baseView(), slot, epoch: 0 });
      if (!inkCi) at = await term.waitFor(new RegExp(`slot ${slot}\\s+epoch 0`), at + 1);
    }
  } finally {
    handle.unmount();
  }
  await handle.waitUntilExit();
  assert.is(src.listeners.size, 0, 'unsubscribed on unmount');
  const out = term.text();
  assert.match(out, /slot 9\s+epoch 0/, 'the last frame stays on screen');
  assert.match(out, /Ctrl-C stops the devnet/);
  handle.unmount();
  assert.is(src.listeners.size, 0, 'a second unmount does not mount the dashboard again');
  assert.is(term.text(), out, 'nor draw anything');
});

test('renderDashboard: a view set in the same tick as unmount is the final frame', async () => {
  const term = fakeTerminal();
  const src = memorySource(baseView());
  const handle = renderDashboard(src.source, { stdout: term.stdout });
  const stopping = baseView();
  stopping.slot = 99;
  stopping.processes = stopping.processes.map((p) => ({ ...p, status: 'stopped' as const, pid: null }));
  src.set(stopping);
  handle.unmount();
  await handle.waitUntilExit();
  const out = term.text();
  const last = out.slice(out.lastIndexOf('svc devnet'));
  assert.match(last, /slot 99/);
  assert.match(lineWith(last, 'execution  '), /execution\s+stopped\s+-/);
});

test('renderDashboard: a SIGINT reaches the caller\'s handler, which unmounts', async () => {
  const term = fakeTerminal();
  const src = memorySource(baseView());
  const handle = renderDashboard(src.source, { stdout: term.stdout });
  let handled = 0;
  const onSigint = () => {
    handled++;
    handle.unmount();
  };
  process.on('SIGINT', onSigint);
  try {
    // Delivered like the kernel would to every listener; ink's signal-exit hook stands aside
    // because another listener exists, so the process is not killed here.
    process.emit('SIGINT', 'SIGINT');
    await handle.waitUntilExit();
  } finally {
    process.off('SIGINT', onSigint);
    handle.unmount();
  }
  assert.is(handled, 1);
  assert.is(src.listeners.size, 0);
  assert.match(term.text(), /slot 42/);
});

test.run();
