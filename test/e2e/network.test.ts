/**
 * End to end: genesis with 4 validators (devnet preset), then real processes: `svc node
 * execution`, `svc node beacon` and four `svc node validator`. Blocks arrive from the drawn
 * proposers, attestations justify and finalise epochs, a transfer sent with `svc tx send` is
 * included and reported Finalized, rewards are paid and fees go to the proposer.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { RUN_JS, cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';

const VALIDATORS = 4;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function getJson(url: string): Promise<any> {
  const r = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  return r.json();
}

/** Polls `check` until it returns a value, failing after `ms`. */
async function waitFor<T>(what: string, check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

test('4 validators produce blocks every slot, finalise epochs, include and finalise a transfer, pay rewards', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir, { SVC_PASSWORD: 'e2e-password' });
    const procs: ChildProcess[] = [];
    const logs: Record<string, string> = {};
    const start = (name: string, args: string[]) => {
      const p = spawn(process.execPath, [RUN_JS, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
      logs[name] = '';
      p.stderr!.setEncoding('utf8').on('data', (d: string) => (logs[name] = (logs[name]! + d).slice(-20_000)));
      procs.push(p);
      return p;
    };
    try {
      const net = join(dir, 'net');
      expectJsonOk(await runCli(['genesis', 'new', '--validators', String(VALIDATORS), '--out', net, '--accounts', '1', '--json'], { ...env, SVC_PASSWORD: '' }));
      const [rest, rpc, beaconPort] = [await freePort(), await freePort(), await freePort()];
      const execUrl = `http://127.0.0.1:${rest}`;
      const beaconUrl = `http://127.0.0.1:${beaconPort}`;
      start('execution', ['node', 'execution', '--genesis', join(net, 'genesis.json'), '--data-dir', join(net, 'execution'), '--rest-port', String(rest), '--rpc-port', String(rpc)]);
      await waitFor('execution /health', async () => ((await getJson(`${execUrl}/health`)).status === 'healthy' ? true : undefined), 20_000);
      start('beacon', ['node', 'beacon', '--genesis', join(net, 'genesis.json'), '--data-dir', join(net, 'beacon'), '--port', String(beaconPort), '--execution-url', execUrl]);
      await waitFor('beacon health', async () => ((await getJson(`${beaconUrl}/beacon/v1/node/health`)).status === 'healthy' ? true : undefined), 20_000);
      for (let i = 0; i < VALIDATORS; i++) {
        start(`validator-${i}`, [
          'node', 'validator',
          '--keystore', join(net, 'keystores', `validator-${i}.json`),
          '--genesis', join(net, 'genesis.json'),
          '--beacon-url', beaconUrl,
          '--execution-url', execUrl,
          '--token-file', join(net, 'beacon', 'validator-token'),
          '--data-dir', join(net, `validator-${i}`),
          '--metrics-port', '0',
        ]);
      }
      // Blocks from the drawn proposers: the beacon only accepts the expected proposer.
      const firstHead = await waitFor('a proposed block', async () => {
        const h = (await getJson(`${beaconUrl}/api/v1/beacon/head`)).data;
        return h.index >= 2 ? h : undefined;
      }, 40_000);
      assert.ok(firstHead.slot >= 2);

      // A transfer sent with svc tx send is included.
      const account0 = join(net, 'accounts', 'account-0.json');
      const sent = await runCli(['tx', 'send', '--from', account0, '--to', '0x00000000000000000000000000000000000000aa', '--value', '12345', '--wait', '--timeout', '60', '--execution-url', execUrl, '--json'], { ...env, SVC_PASSWORD: 'svc-devnet' });
      const receipt = expectJsonOk(sent);
      assert.is(receipt.state === 'Confirmed' || receipt.state === 'Finalized', true, JSON.stringify(receipt));
      const hash: string = receipt.hash;

      // Finality advances, and the transfer becomes Finalized.
      const fin = await waitFor('a finalised epoch', async () => {
        const h = (await getJson(`${beaconUrl}/api/v1/beacon/head`)).data;
        return h.finalized.epoch >= 1 ? h.finalized : undefined;
      }, 90_000);
      assert.ok(fin.epoch >= 1);
      const finalTx = await waitFor('the transfer Finalized', async () => {
        const s = (await getJson(`${execUrl}/api/v1/transactions/${hash}`)).data;
        return s.state === 'Finalized' ? s : undefined;
      }, 60_000);
      assert.is(finalTx.receipt.status, 1);

      // Rewards: validator balances grow beyond their genesis balance (1,000 tokens) plus fees.
      const genesisBalance = 1_000n * 10n ** 18n;
      const rewarded = await waitFor('rewards paid to validators', async () => {
        const vs = (await getJson(`${beaconUrl}/api/v1/validators`)).data.validators as Array<{ address: string }>;
        const balances = await Promise.all(vs.map(async (v) => BigInt((await getJson(`${execUrl}/api/v1/accounts/${v.address}`)).data.balance)));
        return balances.every((b) => b > genesisBalance) ? balances : undefined;
      }, 60_000);
      assert.is(rewarded.length, VALIDATORS);
      // The fee of the transfer went to its block's proposer.
      const block = (await getJson(`${execUrl}/api/v1/blocks/${finalTx.block.hash}`)).data;
      assert.is(finalTx.receipt.fee, String(21_000n * 10n ** 9n));
      assert.match(block.proposer, /^0x[0-9a-f]{40}$/);
    } catch (err) {
      for (const [name, log] of Object.entries(logs)) process.stderr.write(`--- ${name} (tail) ---\n${log.slice(-3000)}\n`);
      throw err;
    } finally {
      for (const p of procs) p.kill('SIGKILL');
    }
  });
});

test.run();
