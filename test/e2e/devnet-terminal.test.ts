/**
 * End to end in a real terminal: `svc devnet up` inside tmux (a real pty) draws the ink dashboard,
 * the slot on screen advances, and Ctrl-C stops every process. Skipped, saying so, where tmux is
 * not installed (the frames themselves are also checked with ink-testing-library in
 * test/devnet/dashboard.test.tsx).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { RUN_JS, withTempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/network.js';
import { pidAlive, readManifest } from '../../src/devnet/manifest.js';

function hasTmux(): boolean {
  try {
    execFileSync('tmux', ['-V'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

test('the dashboard in a real terminal shows the slot advancing; Ctrl-C stops the devnet', async () => {
  if (!hasTmux()) {
    console.log('  (skipped: tmux is not installed)');
    return;
  }
  await withTempDir(async (tmp) => {
    const socket = `svc-test-${process.pid}`;
    const tmux = (...args: string[]) => execFileSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' });
    const dir = join(tmp, 'net');
    const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: tmp, SVC_HOME: join(tmp, 'svc'), TERM: 'xterm-256color' };
    const command = ['env', '-i', ...Object.entries(env).map(([k, v]) => `${k}=${v}`), process.execPath, RUN_JS, 'devnet', 'up', '--validators', '4', '--dir', dir].map(shellQuote).join(' ');
    let pids: number[] = [];
    try {
      tmux('new-session', '-d', '-s', 'devnet', '-x', '110', '-y', '60', `${command}; sleep 60`);
      const screen = () => tmux('capture-pane', '-p', '-t', 'devnet');
      const slotOnScreen = async () => {
        const m = /^slot (\d+)\s+epoch/m.exec(screen());
        return m ? Number(m[1]) : undefined;
      };
      const first = await waitFor('the dashboard to draw a slot', slotOnScreen, 60_000);
      const later = await waitFor('the slot on screen to advance', async () => {
        const s = await slotOnScreen();
        return s !== undefined && s > first ? s : undefined;
      }, 30_000);
      assert.ok(later > first);
      const s = screen();
      for (const part of ['execution', 'beacon', 'validators', 'healthy', 'finalized', 'Ctrl-C stops the devnet']) assert.ok(s.includes(part), `screen shows ${part}:\n${s}`);
      const m = readManifest(dir)!;
      pids = [m.supervisor!.pid, ...m.processes.map((p) => p.pid!)];

      tmux('send-keys', '-t', 'devnet', 'C-c');
      await waitFor('every devnet process to exit', async () => (pids.some((p) => pidAlive(p)) ? undefined : true), 30_000, 100);
      await waitFor('the manifest to say stopped', async () => (readManifest(dir)?.state === 'stopped' ? true : undefined), 5_000, 100);
      assert.match(screen(), /Stopped\. Resume with: svc devnet up --dir/);
    } finally {
      for (const pid of pids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone
        }
      }
      try {
        tmux('kill-server');
      } catch {
        // already gone
      }
    }
  });
});

test.run();
