/**
 * Contracts on a real devnet (execution, beacon and two validator processes), driven as a user
 * would: `svc contract build` the token example, `svc contract deploy` it, transfer with
 * `svc contract call --wait`, read a balance through eth_call (viem's raw `call`), find the
 * Transfer event through eth_getLogs (viem's `getLogs`), make a reverting call that ends with
 * status 0, its reason and the gas charged, wait until all of it is Finalized, then prove the
 * recipient's balance slot against the finalised block's state root with the standalone
 * verifier (src/core/state/trie.ts) and check that a tampered proof fails.
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { createPublicClient, defineChain, http, type PublicClient } from 'viem';
import { decodeValues, encodeCall, eventTopic, addressTopic } from '../../src/core/codec/calldata.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { parseHex, toHex } from '../../src/core/codec/bytes.js';
import { verifyProof, type AccountProofWire } from '../../src/core/state/trie.js';
import { expectCliError, expectJsonOk, runCli, withTempDir } from '../helpers/cli.js';
import { type Devnet, getJson, waitFor, withDevnet } from '../helpers/network.js';

const DEVNET_PASSWORD = 'svc-devnet';
const RECIPIENT = '0x00000000000000000000000000000000000000bb';
const SUPPLY = 1_000_000n;
const SENT = 250n;
type Hex = `0x${string}`;

/** The token's balance slot of `owner`: SHA3-256("balances" ‖ 0x00 ‖ owner) (contracts/README.md). */
function balanceSlot(owner: string): Uint8Array {
  return sha3(new TextEncoder().encode('balances'), new Uint8Array([0]), parseHex(owner, 'owner', 20));
}

/** `svc` with the devnet's account-0 wallet, the execution URL and --json. */
async function svc(net: Devnet, args: string[]) {
  return runCli([...args, '--execution-url', net.execUrl, '--json'], { ...net.env, SVC_PASSWORD: DEVNET_PASSWORD });
}

test('token on a devnet: build, deploy, transfer, eth_call, eth_getLogs, a reverting call, Finalized, and a storage proof against the finalised state root', async () => {
  await withDevnet({ validators: 2 }, async (net) => {
    await net.startAll();
    const slotMs = net.slotMs;
    const epochMs = slotMs * net.slotsPerEpoch;
    const wait = ['--wait', '--timeout', String(Math.ceil((30 * slotMs) / 1000) + 60)];
    const from = ['--from', join(net.net, 'accounts', 'account-0.json')];
    await net.waitHead('the first block', (h) => h.index >= 1, 20 * slotMs + 30_000);

    await withTempDir(async (dir) => {
      // Build: the repository's token example, as a user's file would be.
      const wasm = join(dir, 'token.wasm');
      const built = expectJsonOk(await runCli(['contract', 'build', join('contracts', 'examples', 'token.ts'), '--out', wasm, '--json'], net.env));
      assert.ok((built.methods as string[]).includes('transfer'), `built methods: ${JSON.stringify(built.methods)}`);

      // Deploy with constructor arguments: the supply is minted to the deployer.
      const deployed = expectJsonOk(await svc(net, ['contract', 'deploy', wasm, 'string:Token', 'string:TOK', 'u64:18', SUPPLY.toString(), ...from, ...wait]));
      assert.is(deployed.receipt.status, 1, JSON.stringify(deployed.receipt));
      const token = deployed.receipt.contractAddress as string;
      const deployer = deployed.from as string;
      assert.match(token, /^0x[0-9a-f]{40}$/);

      // Transfer through a contract call.
      const transfer = expectJsonOk(await svc(net, ['contract', 'call', token, 'transfer', RECIPIENT, SENT.toString(), ...from, ...wait]));
      assert.is(transfer.receipt.status, 1, JSON.stringify(transfer.receipt));
      assert.is(transfer.receipt.logs.length, 1, 'one Transfer event');

      // Read the recipient's balance through eth_call with viem (a raw call: svc's calldata is not Solidity's ABI).
      const chain = defineChain({ id: net.genesis.network_id, name: 'svc devnet', nativeCurrency: { name: 'SVC', symbol: 'SVC', decimals: 18 }, rpcUrls: { default: { http: [net.rpcUrl] } } });
      const viem = createPublicClient({ chain, transport: http(net.rpcUrl) }) as PublicClient;
      const read = await viem.call({ to: token as Hex, data: toHex(encodeCall('balanceOf', [{ type: 'address', value: RECIPIENT }])) as Hex });
      assert.equal(decodeValues(parseHex(read.data!, 'return data')), [{ type: 'u256', value: SENT }]);
      const cliRead = expectJsonOk(await svc(net, ['contract', 'read', token, 'balanceOf', deployer]));
      assert.equal(cliRead.values, [{ type: 'u256', value: (SUPPLY - SENT).toString() }]);

      // The Transfer event through eth_getLogs, filtered by emitter and topics.
      const logs = await viem.getLogs({ address: token as Hex, fromBlock: 0n, toBlock: 'latest' });
      const transferTopic = eventTopic('Transfer');
      const ours = logs.filter((l) => l.transactionHash === transfer.hash);
      assert.is(ours.length, 1, `eth_getLogs found the transfer's event: ${JSON.stringify(logs, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      assert.is(ours[0]!.topics[0], transferTopic);
      assert.is(ours[0]!.topics[1], addressTopic(deployer));
      assert.is(ours[0]!.topics[2], addressTopic(RECIPIENT));
      const byTopic = await viem.request({ method: 'eth_getLogs', params: [{ address: token as Hex, fromBlock: '0x0', toBlock: 'latest', topics: [transferTopic as Hex, null, addressTopic(RECIPIENT) as Hex] }] });
      assert.is(byTopic.length, 1, 'a topic filter on the recipient finds exactly the transfer');

      // A reverting call (more than the sender holds), sent with an explicit gas limit because the
      // node's estimate refuses a call that would fail: status 0, the reason and the gas charged.
      const over = (SUPPLY * 10n).toString();
      const failed = await svc(net, ['contract', 'call', token, 'transfer', RECIPIENT, over, '--gas-limit', '300000', ...from, ...wait]);
      const message = expectCliError(failed, { exit: 1, code: 'TX_FAILED', json: true });
      assert.match(message, /revert: insufficient balance/);
      const charged = /gas charged (\d+)/.exec(message);
      assert.ok(charged && Number(charged[1]) > 21_000 && Number(charged[1]) <= 300_000, `gas charged: ${message}`);
      const failedHash = /transaction (0x[0-9a-f]{64})/.exec(message)![1]!;
      const failedReceipt = await viem.getTransactionReceipt({ hash: failedHash as Hex });
      assert.is(failedReceipt.status, 'reverted');
      assert.is(failedReceipt.gasUsed, BigInt(charged![1]!));
      const after = await viem.call({ to: token as Hex, data: toHex(encodeCall('balanceOf', [{ type: 'address', value: RECIPIENT }])) as Hex });
      assert.equal(decodeValues(parseHex(after.data!, 'return data')), [{ type: 'u256', value: SENT }], 'the reverted call changed nothing');

      // Everything reaches Finalized.
      for (const hash of [deployed.hash, transfer.hash, failedHash]) {
        await waitFor(`${hash} Finalized`, async () => ((await getJson(`${net.execUrl}/api/v1/transactions/${hash}`)).data?.state === 'Finalized' ? true : undefined), 12 * epochMs + 60_000);
      }

      // The recipient's balance slot, proven against the finalised block's state root.
      const finalized = (await getJson(`${net.execUrl}/api/v1/blocks/finalized`)).data as { hash: string; number: number; state_root: string };
      const slot = toHex(balanceSlot(RECIPIENT));
      const proofDoc = (await getJson(`${net.execUrl}/api/v1/accounts/${token}/proof?block=${finalized.hash}&keys=${slot}`)).data as AccountProofWire & { stateRoot: string };
      const root = parseHex(finalized.state_root, 'state root', 32);
      assert.is(proofDoc.stateRoot, finalized.state_root);
      assert.is(BigInt(proofDoc.storageProof[0]!.value), SENT, 'the proven slot holds the transferred amount');
      assert.ok(verifyProof(root, proofDoc), 'the proof verifies against the finalised state root');
      // Tampered: another value, another node byte, another root.
      const tamperedValue = structuredClone(proofDoc);
      tamperedValue.storageProof[0]!.value = '0x' + (SENT + 1n).toString(16).padStart(64, '0');
      assert.not.ok(verifyProof(root, tamperedValue), 'a tampered value fails');
      const tamperedNode = structuredClone(proofDoc);
      const nodes = tamperedNode.storageProof[0]!.proof;
      const last = nodes[nodes.length - 1]!;
      nodes[nodes.length - 1] = last.slice(0, -2) + (last.endsWith('00') ? '01' : '00');
      assert.not.ok(verifyProof(root, tamperedNode), 'a tampered node fails');
      const otherRoot = parseHex((await getJson(`${net.execUrl}/api/v1/blocks/${finalized.number - 1}`)).data.state_root, 'state root', 32);
      assert.not.ok(verifyProof(otherRoot, proofDoc), 'the proof does not verify against another block\'s root');
    });
  });
});

test.run();
