/**
 * Nothing the real `svc node execution` process acknowledged is lost to a SIGKILL: 100 pending
 * transactions (REST and JSON-RPC) and a faucet claim answered just before the kill are all back
 * in the pool after the restart, the claimed address is still on cooldown, and a block built
 * from the restarted pool includes every one of them.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { toHex } from '../../../../src/core/codec/bytes.js';
import { genesisHash } from '../../../../src/core/genesis/genesis.js';
import { blockToJson } from '../../../../src/core/types/block.js';
import { encodeTx, type StandardTx } from '../../../../src/core/types/transaction.js';
import { txFromJson } from '../../../../src/core/types/transaction-json.js';
import { encryptSeed, walletFileFor } from '../../../../src/wallet/keystore.js';
import { DEV_MNEMONIC, mnemonicToSeed } from '../../../../src/wallet/derivation.js';
import { devnet, expectEnvelope, expectOk, GENESIS_TIME, genesisBranch, hashOf, http, makeBlock, raw, transfer, withTempDir } from '../fixture.js';
import { limited, mempool, type Proc, startProc, stopClean } from '../process.js';

const { genesis, keys } = devnet();
const acc0 = keys.accounts[0]!;
const acc1 = keys.accounts[1]!;
const CLAIMANT = '0x00000000000000000000000000000000000000c1';
const PASSWORD = 'journal-crash-test';
const PENDING = 100;
/** Submissions in flight at once: enough to make the journal group them. */
const IN_FLIGHT = 10;

const crash = suite('crash: SIGKILL with pending transactions');

crash('100 pending transactions and a faucet claim made just before SIGKILL are back after the restart, then included', async () => {
  await withTempDir(async (dir) => {
    await writeFile(join(dir, 'genesis.json'), JSON.stringify(genesis, null, 2));
    await mkdir(join(dir, 'keystores'));
    const encrypted = await encryptSeed(mnemonicToSeed(DEV_MNEMONIC), PASSWORD, 256);
    await writeFile(join(dir, 'keystores', 'faucet.json'), JSON.stringify(walletFileFor(encrypted, keys.faucet)));
    const env = { SVC_FAUCET_PASSWORD: PASSWORD };

    // Half from each funded account; acc1's go through JSON-RPC.
    const sends: Array<{ tx: StandardTx; via: 'rest' | 'rpc' }> = [];
    for (let n = 0; n < PENDING / 2; n++) sends.push({ tx: transfer(acc0, { nonce: n, value: BigInt(n + 1) }), via: 'rest' }, { tx: transfer(acc1, { nonce: n, value: BigInt(n + 1) }), via: 'rpc' });
    const txs = sends.map((s) => s.tx);
    let running: Proc | undefined;
    try {
      const p = (running = await startProc(dir, env));
      await limited(sends, IN_FLIGHT, async ({ tx, via }) => {
        if (via === 'rest') {
          const r = await http(p.rest, '/api/v1/transactions', { json: raw(tx) });
          assert.is(r.status, 202, r.text);
        } else {
          const r = await http(p.rpc, '/', { json: { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [toHex(encodeTx(tx))] } });
          assert.is(r.body?.result, hashOf(tx), r.text);
        }
      });
      const claim = await http(p.rest, '/api/v1/faucet/claim', { json: { address: CLAIMANT } });
      assert.is(claim.status, 200, claim.text);
      // Killed as soon as the claim is answered: nothing after the answer may be needed.
      p.child.kill('SIGKILL');
      assert.is((await p.exited).signal, 'SIGKILL');
      running = undefined;

      const expected = [...txs.map(hashOf), claim.body.tx_hash as string].sort();
      const q = (running = await startProc(dir, env));
      assert.equal(await mempool(q.rest), expected, 'every acknowledged transaction is back in the pool');
      const again = await http(q.rest, '/api/v1/faucet/claim', { json: { address: CLAIMANT } });
      expectEnvelope(again, 429, 'FAUCET_COOLDOWN', new RegExp(`^faucet cooldown: ${CLAIMANT} can claim again after `));

      // The proposer's view of the restarted pool builds a block holding all of them.
      const pending = expectOk(await http(q.rest, '/api/v1/engine/getPendingTransactions'));
      assert.is(pending.count, PENDING + 1);
      const block = makeBlock({ hash: toHex(genesisHash(genesis)), index: 0, timestamp: GENESIS_TIME * 1000, branch: genesisBranch() }, { txs: (pending.transactions as unknown[]).map(txFromJson) });
      const imported = expectOk(await http(q.rest, '/api/v1/engine/newPayload', { json: blockToJson(block) }));
      assert.is(imported.canonical, true);
      assert.equal(await mempool(q.rest), [], 'the pool emptied into the block');
      for (const h of expected) {
        const status = expectOk(await http(q.rest, `/api/v1/transactions/${h}`));
        assert.is(status.state, 'Confirmed', h);
        assert.is(status.receipt.status, 1, h);
      }
      assert.is(expectOk(await http(q.rest, `/api/v1/accounts/${CLAIMANT}`)).balance, genesis.config.faucet.amount);
      await stopClean(q);
      running = undefined;

      // Included, they left the journal: a restart finds an empty pool.
      const r = (running = await startProc(dir, env));
      assert.equal(await mempool(r.rest), []);
      await stopClean(r);
      running = undefined;
    } finally {
      if (running) {
        running.child.kill('SIGKILL');
        await running.exited;
      }
    }
  });
});

crash.run();
