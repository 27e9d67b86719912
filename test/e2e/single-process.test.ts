/** `svc node all`: every layer in one process still produces, finalises and includes transfers. */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { RUN_JS, cliEnv, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { freePort } from '../helpers/network.js';


async function poll<T>(what: string, check: () => Promise<T | undefined>, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const json = async (url: string): Promise<any> => (await fetch(url, { signal: AbortSignal.timeout(5_000) })).json();

test('svc node all: blocks, a finalised transfer, finality', async () => {
  await withTempDir(async (dir) => {
    const env = cliEnv(dir);
    const net = join(dir, 'net');
    expectJsonOk(await runCli(['genesis', 'new', '--validators', '4', '--accounts', '1', '--out', net, '--json'], env));
    const [rest, rpc, beacon] = [await freePort(), await freePort(), await freePort()];
    const child = spawn(process.execPath, [RUN_JS, 'node', 'all', '--genesis', join(net, 'genesis.json'), '--data-dir', join(net, 'all'), '--rest-port', String(rest), '--rpc-port', String(rpc), '--beacon-port', String(beacon), '--p2p-host', '127.0.0.1', '--p2p-port', '0'], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let log = '';
    child.stderr!.setEncoding('utf8').on('data', (d: string) => (log = (log + d).slice(-20_000)));
    try {
      const exec = `http://127.0.0.1:${rest}`;
      await poll('blocks', async () => ((await json(`http://127.0.0.1:${beacon}/api/v1/beacon/head`)).data.index >= 2 ? true : undefined), 40_000);
      const sent = expectJsonOk(
        await runCli(['tx', 'send', '--from', join(net, 'accounts', 'account-0.json'), '--to', '0x00000000000000000000000000000000000000bb', '--value', '777', '--wait', '--timeout', '60', '--execution-url', exec, '--json'], { ...env, SVC_PASSWORD: 'svc-devnet' }),
      );
      const final = await poll('the transfer Finalized', async () => {
        const s = (await json(`${exec}/api/v1/transactions/${sent.hash}`)).data;
        return s.state === 'Finalized' ? s : undefined;
      }, 90_000);
      assert.is(final.receipt.status, 1);
      assert.is((await json(`${exec}/api/v1/accounts/0x00000000000000000000000000000000000000bb`)).data.balance, '777');
    } catch (err) {
      process.stderr.write(`--- node all (tail) ---\n${log.slice(-3000)}\n`);
      throw err;
    } finally {
      child.kill('SIGKILL');
    }
  });
});

test.run();
