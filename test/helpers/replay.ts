/**
 * A replaying execution node for determinism e2e tests (not a test file itself): a fresh
 * `svc node execution` on a devnet's genesis, with its own data dir and ports and no P2P, so it
 * hears of nothing but the blocks posted to its engine API. The engine API takes loopback
 * requests without a token (src/node/execution/api/engine.ts), which is what these tests use.
 */
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { runCli } from './cli.js';
import { type Devnet, freePort, getJson, waitFor } from './network.js';

/** The replaying node's REST and JSON-RPC URLs. */
export interface ReplayNode {
  name: string;
  restUrl: string;
  rpcUrl: string;
}

/** A canonical block as the producer's REST API serves it (GET /api/v1/blocks/N). */
export interface ProducedBlock {
  hash: string;
  number: number;
  state_root: string;
  proposer: string;
  canonical: boolean;
  block: { attestations: Array<{ validator_index: number }>; transactions: unknown[] };
}

/** POSTs `body` as JSON and returns the parsed reply, whatever its HTTP status. */
export async function postJson(url: string, body: unknown): Promise<any> {
  const r = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  return r.json();
}

/** One JSON-RPC call; fails the test on an error reply. */
export async function rpc(url: string, method: string, params: unknown[]): Promise<any> {
  const r = await postJson(url, { jsonrpc: '2.0', id: 1, method, params });
  assert.ok(r.error === undefined, `${method} at ${url}: ${JSON.stringify(r.error)}`);
  return r.result;
}

/** Starts the process `name` on `net`'s genesis (`env` added to its environment) and waits until it is healthy. */
export async function startReplayNode(net: Devnet, name = 'replay', env: Record<string, string> = {}): Promise<ReplayNode> {
  const help = await runCli(['node', 'execution', '--help'], net.env);
  const rest = await freePort();
  const rpcPort = await freePort();
  const restUrl = `http://127.0.0.1:${rest}`;
  net.start(name, ['node', 'execution', '--genesis', net.genesisPath, '--data-dir', join(net.net, name), '--rest-port', String(rest), '--rpc-port', String(rpcPort), ...(help.stdout.includes('--no-p2p') ? ['--no-p2p'] : [])], { env });
  await waitFor(`${name} /health`, async () => ((await getJson(`${restUrl}/health`).catch(() => ({}))).status === 'healthy' ? true : undefined), 30_000);
  return { name, restUrl, rpcUrl: `http://127.0.0.1:${rpcPort}` };
}

/**
 * Posts the producer's canonical blocks 1..`head` to `replay` in order through
 * POST /api/v1/engine/newPayload; each must import with the producer's block hash and state
 * root. `each` runs after each import, for the caller's own checks at that height.
 */
export async function feedCanonicalBlocks(net: Devnet, replay: ReplayNode, head: number, each?: (n: number, b: ProducedBlock) => Promise<void>): Promise<void> {
  for (let n = 1; n <= head; n++) {
    const b = (await getJson(`${net.execUrl}/api/v1/blocks/${n}`)).data as ProducedBlock;
    assert.ok(b.canonical, `block ${n} is canonical`);
    const r = await postJson(`${replay.restUrl}/api/v1/engine/newPayload`, b.block);
    assert.ok(r.success, `block ${n} imported: ${JSON.stringify(r.error)}`);
    assert.is(r.data.block_hash, b.hash, `block hash at height ${n}`);
    assert.is(r.data.state_root, b.state_root, `state root at height ${n}`);
    if (each) await each(n, b);
  }
}
