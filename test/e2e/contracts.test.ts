/**
 * Contracts on a real devnet (execution, beacon and two validator processes), driven as a user
 * would: `svc contract build` the token example, `svc contract deploy` it, transfer with
 * `svc contract call --wait`, read a balance through eth_call (viem's raw `call`), find the
 * Transfer event through eth_getLogs (viem's `getLogs`), make a reverting call that ends with
 * status 0, its reason and the gas charged, wait until all of it is Finalized, then prove the
 * recipient's balance slot against the finalised block's state root with the standalone
 * verifier (src/core/state/trie.ts) and check that a tampered proof fails.
 *
 * The chain also gets a nested cross-contract call (the caller example's `bump` increments the
 * counter example, and `tryCall("nope")` survives a failed inner call). Then determinism: the
 * devnet's processes verify signatures with liboqs, and a fresh execution node pinned to noble is
 * fed every canonical block from genesis through the engine API; at every height it must compute
 * the producer's block hash and state root and identical receipts for every transaction (status,
 * gas used, contract address, logs, revert reason).
 */
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { join } from 'node:path';
import { JsonRpcProvider } from 'ethers';
import { createPublicClient, decodeErrorResult, defineChain, http, type Log, type PublicClient, webSocket } from 'viem';
import { decodeValues, encodeCall, eventTopic, addressTopic } from '../../src/core/codec/calldata.js';
import { sha3 } from '../../src/core/crypto/hash.js';
import { parseHex, toHex } from '../../src/core/codec/bytes.js';
import { verifyProof, type AccountProofWire } from '../../src/core/state/trie.js';
import { expectCliError, expectJsonOk, REPO_ROOT, runCli, withTempDir } from '../helpers/cli.js';
import { type Devnet, getJson, waitFor, withDevnet } from '../helpers/network.js';
import { feedCanonicalBlocks, postJson, rpc, startReplayNode } from '../helpers/replay.js';

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

/** The backend the devnet's processes use, and the other one, which the replaying node uses. */
const PRODUCER_BACKEND = 'svc-wasm';
const REPLAY_BACKEND = 'noble';

/** The backend `name`'s current run reported at start-up. */
function backendOf(net: Devnet, name: string): unknown {
  return net.log(name).find((l) => l.msg === 'signature backend')?.backend;
}

/**
 * Stops the validators so the chain stands still, then feeds every canonical block to a fresh
 * execution node on the other signature backend: the same block hash, state root and receipts
 * at every height. `sent` are the test's transactions, which must all be among those replayed.
 */
async function replayOnOtherBackend(net: Devnet, sent: string[]): Promise<void> {
  assert.is(backendOf(net, 'execution'), PRODUCER_BACKEND, "the producer's signature backend");
  for (let i = 0; i < net.validators; i++) await net.kill(`validator-${i}`);
  const head = (await getJson(`${net.execUrl}/health`)).latest_block as number;
  const replay = await startReplayNode(net, 'replay', { SVC_CRYPTO_BACKEND: REPLAY_BACKEND });
  assert.is(backendOf(net, 'replay'), REPLAY_BACKEND, "the replaying node's signature backend");

  const replayed = new Set<string>();
  const statuses = new Set<string>();
  let logs = 0;
  await feedCanonicalBlocks(net, replay, head, async (n) => {
    const tag = '0x' + n.toString(16);
    const hashes = (await rpc(net.rpcUrl, 'eth_getBlockByNumber', [tag, false])).transactions as string[];
    assert.equal((await rpc(replay.rpcUrl, 'eth_getBlockByNumber', [tag, false])).transactions, hashes, `transactions at height ${n}`);
    for (const hash of hashes) {
      const produced = await rpc(net.rpcUrl, 'eth_getTransactionReceipt', [hash]);
      const replayedReceipt = await rpc(replay.rpcUrl, 'eth_getTransactionReceipt', [hash]);
      assert.ok(produced !== null, `the producer's receipt of ${hash}`);
      // The whole receipt: status, gas used, contract address, logs (with their indexes), revert reason.
      assert.equal(replayedReceipt, produced, `receipt of ${hash} at height ${n}`);
      replayed.add(hash);
      statuses.add(produced.status);
      logs += produced.logs.length;
    }
  });
  for (const hash of sent) assert.ok(replayed.has(hash), `${hash} was among the replayed transactions`);
  assert.equal([...statuses].sort(), ['0x0', '0x1'], 'the replay covered successful and failed transactions');
  process.stderr.write(`[contracts] ${head} blocks replayed on ${REPLAY_BACKEND}: ${replayed.size} transactions, ${logs} logs, identical roots and receipts\n`);
}

test('token on a devnet: build, deploy, transfer, eth_call, eth_getLogs, a reverting call, Finalized, a storage proof against the finalised state root, a nested call, and the same roots and receipts on the other signature backend', async () => {
  await withDevnet({ validators: 2, env: { SVC_CRYPTO_BACKEND: PRODUCER_BACKEND } }, async (net) => {
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

      // dApp tooling watches the token before the transfer: a polled event filter (eth_newFilter)
      // and a WebSocket subscription (eth_subscribe logs) on the JSON-RPC port.
      const chain = defineChain({ id: net.genesis.network_id, name: 'svc devnet', nativeCurrency: { name: 'SVC', symbol: 'SVC', decimals: 18 }, rpcUrls: { default: { http: [net.rpcUrl] } } });
      const viem = createPublicClient({ chain, transport: http(net.rpcUrl) }) as PublicClient;
      const eventFilter = await viem.createEventFilter({ address: token as Hex });
      const wsViem = createPublicClient({ chain, transport: webSocket(net.rpcUrl.replace(/^http/, 'ws')) });
      const pushed: Log[] = [];
      const unwatch = wsViem.watchEvent({ address: token as Hex, onLogs: (l) => pushed.push(...l) });

      // Transfer through a contract call.
      const transfer = expectJsonOk(await svc(net, ['contract', 'call', token, 'transfer', RECIPIENT, SENT.toString(), ...from, ...wait]));
      assert.is(transfer.receipt.status, 1, JSON.stringify(transfer.receipt));
      assert.is(transfer.receipt.logs.length, 1, 'one Transfer event');

      // The filter and the subscription both saw the Transfer event.
      const polled = await viem.getFilterChanges({ filter: eventFilter });
      assert.ok(polled.some((l) => l.transactionHash === transfer.hash && !l.removed), `eth_getFilterChanges has the transfer's event: ${JSON.stringify(polled, (_k, v) => (typeof v === 'bigint' ? v.toString() : v))}`);
      await waitFor('the Transfer event over eth_subscribe', async () => (pushed.some((l) => l.transactionHash === transfer.hash) ? true : undefined), 30_000);
      unwatch();
      await wsViem.transport.getRpcClient().then((c) => c.close());
      assert.is(await viem.uninstallFilter({ filter: eventFilter }), true);
      // eth_getFilterLogs: a filter from block 0 answers the logs already in the chain.
      const historic = await viem.createEventFilter({ address: token as Hex, fromBlock: 0n });
      const held = await viem.getFilterLogs({ filter: historic });
      assert.ok(held.some((l) => l.transactionHash === transfer.hash), 'eth_getFilterLogs has the transfer\'s event');
      assert.is(await viem.uninstallFilter({ filter: historic }), true);

      // Read the recipient's balance through eth_call with viem (a raw call: svc's calldata is not Solidity's ABI).
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
      // node's estimate refuses a call that would fail: status 0, the reason and the gas charged
      // (a call pays its module's compilation, 10 a stored byte, and instantiation: about 365,000 for a transfer).
      const over = (SUPPLY * 10n).toString();
      const failed = await svc(net, ['contract', 'call', token, 'transfer', RECIPIENT, over, '--gas-limit', '1000000', ...from, ...wait]);
      const message = expectCliError(failed, { exit: 1, code: 'TX_FAILED', json: true });
      assert.match(message, /revert: insufficient balance/);
      const charged = /gas charged (\d+)/.exec(message);
      assert.ok(charged && Number(charged[1]) > 21_000 && Number(charged[1]) <= 1_000_000, `gas charged: ${message}`);
      const failedHash = /transaction (0x[0-9a-f]{64})/.exec(message)![1]!;
      const failedReceipt = await viem.getTransactionReceipt({ hash: failedHash as Hex });
      assert.is(failedReceipt.status, 'reverted');
      assert.is(failedReceipt.gasUsed, BigInt(charged![1]!));
      // Over JSON-RPC the reason is ABI-encoded Error(string), in the receipt and in a reverted
      // eth_call's error data, so viem's and ethers' decoders name it.
      const rpcReceipt = await viem.request({ method: 'eth_getTransactionReceipt', params: [failedHash as Hex] });
      const receiptReason = (rpcReceipt as unknown as { revertReason?: Hex }).revertReason;
      assert.ok(receiptReason, 'the reverted receipt carries revert data');
      assert.equal(decodeErrorResult({ abi: [], data: receiptReason }).args, ['insufficient balance']);
      const overCall = { from: deployer, to: token, data: toHex(encodeCall('transfer', [{ type: 'address', value: RECIPIENT }, { type: 'u256', value: SUPPLY * 10n }])) };
      const reverted = (await postJson(net.rpcUrl, { jsonrpc: '2.0', id: 1, method: 'eth_call', params: [overCall, 'latest'] })) as { error?: { code: number; message: string; data?: Hex } };
      assert.is(reverted.error?.code, 3, JSON.stringify(reverted));
      assert.equal(decodeErrorResult({ abi: [], data: reverted.error!.data! }).args, ['insufficient balance']);
      const ethers = new JsonRpcProvider(net.rpcUrl, undefined, { staticNetwork: true, polling: false });
      try {
        const refused = await ethers.call(overCall).then(
          () => undefined,
          (err: { reason?: string | null }) => err,
        );
        assert.ok(refused, 'ethers refuses the reverting call');
        assert.is(refused!.reason, 'insufficient balance', 'ethers decodes the reason');
      } finally {
        ethers.destroy();
      }
      const after = await viem.call({ to: token as Hex, data: toHex(encodeCall('balanceOf', [{ type: 'address', value: RECIPIENT }])) as Hex });
      assert.equal(decodeValues(parseHex(after.data!, 'return data')), [{ type: 'u256', value: SENT }], 'the reverted call changed nothing');

      // A nested call: the caller example increments the counter example, which logs the caller.
      const dist = join(REPO_ROOT, 'dist', 'contracts');
      const counterDeploy = expectJsonOk(await svc(net, ['contract', 'deploy', join(dist, 'counter.wasm'), ...from, ...wait]));
      assert.is(counterDeploy.receipt.status, 1, JSON.stringify(counterDeploy.receipt));
      const counter = counterDeploy.receipt.contractAddress as string;
      const callerDeploy = expectJsonOk(await svc(net, ['contract', 'deploy', join(dist, 'caller.wasm'), counter, ...from, ...wait]));
      assert.is(callerDeploy.receipt.status, 1, JSON.stringify(callerDeploy.receipt));
      const caller = callerDeploy.receipt.contractAddress as string;
      const bump = expectJsonOk(await svc(net, ['contract', 'call', caller, 'bump', ...from, ...wait]));
      assert.is(bump.receipt.status, 1, JSON.stringify(bump.receipt));
      const incremented = (bump.receipt.logs as Array<{ address: string; topics: string[] }>).filter((l) => l.address === counter);
      assert.is(incremented.length, 1, `the counter's event in the outer receipt: ${JSON.stringify(bump.receipt.logs)}`);
      assert.is(incremented[0]!.topics[1], addressTopic(caller), 'the counter saw the caller contract as its caller');
      // A failed inner call is undone while the outer call succeeds.
      const tried = expectJsonOk(await svc(net, ['contract', 'call', caller, 'tryCall', 'string:nope', ...from, ...wait]));
      assert.is(tried.receipt.status, 1, JSON.stringify(tried.receipt));
      assert.equal(expectJsonOk(await svc(net, ['contract', 'read', counter, 'get'])).values, [{ type: 'u64', value: '1' }]);
      const sent = [deployed.hash, transfer.hash, failedHash, counterDeploy.hash, callerDeploy.hash, bump.hash, tried.hash] as string[];

      // Everything reaches Finalized.
      for (const hash of sent) {
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
      // eth_getProof's answer verifies as it is: 32-byte storage values (EIP-1186), no re-padding.
      const rpcProof = (await viem.request({ method: 'eth_getProof', params: [token as Hex, [slot as Hex], `0x${finalized.number.toString(16)}` as Hex] })) as unknown as AccountProofWire;
      assert.match(rpcProof.storageProof[0]!.value, /^0x[0-9a-f]{64}$/);
      assert.ok(verifyProof(root, { ...rpcProof, stateRoot: finalized.state_root }), 'the JSON-RPC proof verifies against the finalised state root');
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

      await replayOnOtherBackend(net, sent);
    });
  });
});

test.run();
