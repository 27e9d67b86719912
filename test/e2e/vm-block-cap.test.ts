/**
 * Issue 33, real processes: two producing nodes (execution + beacon, two validators each, over
 * libp2p) import a block holding the worst hostile contract shape at the block gas cap within
 * one slot, and agree on its receipt and state root. Two shapes, one block each, each transaction
 * given the whole block gas cap of genesis: nested `call`s into a callee whose instantiation is
 * as expensive as the VM's limits allow (test/helpers/hostile-contracts.ts), and a loop of
 * `sha3` host calls. How long after its slot each node held the block (its receipt answers) is
 * printed, not asserted: on a loaded machine it passed a slot (2.2 s of a 2 s slot in a CI run)
 * while the chain went on and finalised it. The import-time bound is performance and lives in the
 * bench: bench/vm-abuse.ts imports each hostile shape at the cap against plain-transfer blocks.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { attacker, heavyCallee, wasmFile } from '../helpers/hostile-contracts.js';
import { getJson, waitFor } from '../helpers/network.js';
import { DEVNET_KEYSTORE_PASSWORD, type NetNode, type P2pNet, startProducers, withP2pNet } from '../helpers/p2p-network.js';

/** `svc contract …` from account 0 against `node`'s execution REST. */
async function svc(net: P2pNet, node: NetNode, args: string[]): Promise<any> {
  return expectJsonOk(await runCli([...args, '--from', join(net.net, 'accounts', 'account-0.json'), '--execution-url', node.execUrl, '--json'], { ...net.env, SVC_PASSWORD: DEVNET_KEYSTORE_PASSWORD }));
}

/** The receipt of `hash` on `node`, if it has one. */
async function receiptOn(node: NetNode, hash: string): Promise<any> {
  const r = await getJson(`${node.execUrl}/api/v1/transactions/${hash}/receipt`);
  return r.success === true ? r.data : undefined;
}

test('2 nodes import a block-gas-cap transaction of each hostile shape, with the same receipt and state root', async () => {
  await withP2pNet({ validators: 4 }, async (net) => {
    const [p0, p1] = await startProducers(net);
    const slotMs = net.slotMs;
    const cap = net.genesis.config.max_gas_per_block;
    await net.waitSameHead([p0, p1], 'a common head with blocks', (h) => h.index >= 1, 20 * slotMs + 30_000);
    const wait = ['--wait', '--timeout', String(Math.ceil((30 * slotMs) / 1000) + 60)];

    await withTempDir(async (dir) => {
      const calleeCode = heavyCallee();
      const callee = await svc(net, p0, ['contract', 'deploy', await wasmFile(dir, 'callee', calleeCode), ...wait]);
      assert.is(callee.receipt.status, 1, JSON.stringify(callee.receipt));
      const hostile = await svc(net, p0, ['contract', 'deploy', await wasmFile(dir, 'attacker', attacker(callee.receipt.contractAddress, 0n)), ...wait]);
      assert.is(hostile.receipt.status, 1, JSON.stringify(hostile.receipt));
      const target = hostile.receipt.contractAddress as string;

      for (const method of ['hammer', 'hash']) {
        const sent = await svc(net, p0, ['contract', 'call', target, method, '--gas-limit', String(cap)]);
        const hash = sent.hash as string;
        // When each node first answers the receipt (polled every 50 ms): its import is done.
        const seen = new Map<string, number>();
        await waitFor(`the ${method} transaction's receipt on both nodes`, async () => {
          for (const n of [p0, p1]) if (!seen.has(n.name) && (await receiptOn(n, hash))) seen.set(n.name, Date.now());
          return seen.size === 2 ? true : undefined;
        }, 60 * slotMs + 60_000, 50);
        // Compared once finalized on both: until then a node may still hold it in another fork's
        // block (a reorg around its inclusion did exactly that on a loaded machine).
        const [r0, r1] = await waitFor(`the ${method} transaction finalized on both nodes`, async () => {
          const states = await Promise.all([p0, p1].map(async (n) => (await getJson(`${n.execUrl}/api/v1/transactions/${hash}`)).data?.state));
          return states.every((st) => st === 'Finalized') ? Promise.all([receiptOn(p0, hash), receiptOn(p1, hash)]) : undefined;
        }, 30 * slotMs + 30_000);
        assert.equal(r1, r0, `the ${method} receipt is the same on both nodes`);
        assert.is(r0.gasUsed, cap, `the ${method} transaction used the whole block gas cap (${JSON.stringify(r0)})`);
        const [b0, b1] = await Promise.all([p0, p1].map(async (n) => (await getJson(`${n.execUrl}/api/v1/blocks/${r0.blockHash}`)).data));
        assert.is(b1.state_root, b0.state_root, `the ${method} block's state root is the same on both nodes`);
        const lags = [p0, p1].map((n) => seen.get(n.name)! - b0.timestamp);
        process.stderr.write(`[vm-block-cap] ${method}: block ${b0.number}, gas ${r0.gasUsed}, held by p0 ${lags[0]} ms and p1 ${lags[1]} ms after its slot started (slot ${slotMs} ms)\n`);
      }
    });
  });
});

test.run();
