/**
 * `service_execution_transactions_rejected_total` as an alert or a rate() needs it: every known
 * reason has a series at 0 before the first rejection, and refusals before admission count too:
 * bodies and envelopes that do not parse (REST 400, JSON-RPC and batch params) as MALFORMED, a
 * spec error found while parsing as its code, the per-client rate limit as RATE_LIMITED, each
 * once (a refusal by admission is not counted again). Also the faucet's signatures in
 * `quantum_canonical_sig_generated_total{kind="transaction"}`.
 */
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { toHex } from '../../../src/core/codec/bytes.js';
import { TX_ERRORS } from '../../../src/core/errors.js';
import { encodeTx } from '../../../src/core/types/transaction.js';
import { txToJson } from '../../../src/core/types/transaction-json.js';
import { TX_REJECTION_REASONS } from '../../../src/node/execution/metrics.js';
import type { ExecutionNode } from '../../../src/node/execution/node.js';
import { GWEI } from '../../../src/core/constants.js';
import { devnet, expectEnvelope, http, metricValue, post, rpc, submit, transfer, withNode } from './fixture.js';

const { keys } = devnet();
const REJECTED = 'service_execution_transactions_rejected_total';

async function scrape(node: ExecutionNode): Promise<string> {
  return (await http(node.restUrl, '/metrics')).text;
}

/** Every `reason` series of the rejection counter with its value. */
function rejections(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of text.matchAll(new RegExp(`^${REJECTED}\\{reason="([A-Z_]+)"\\} (\\d+)$`, 'gm'))) out[m[1]!] = Number(m[2]);
  return out;
}

/** The counts that changed between two scrapes. */
function delta(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== (before[k] ?? 0)) out[k] = v - (before[k] ?? 0);
  return out;
}

const rejected = suite('execution metrics: rejections');

rejected('every known reason has a series at 0 before any rejection (spec errors, pool, contract, rate limit, journal, MALFORMED)', async () => {
  await withNode(async (node) => {
    const r = rejections(await scrape(node));
    assert.equal(Object.keys(r).sort(), [...TX_REJECTION_REASONS].sort());
    assert.ok(Object.values(r).every((v) => v === 0), JSON.stringify(r));
    for (const e of Object.values(TX_ERRORS)) assert.ok(e.code in r, e.code);
    for (const code of ['ALREADY_KNOWN', 'POOL_FULL', 'RATE_LIMITED', 'MALFORMED', 'CONTRACT_MODULE_MALFORMED']) assert.ok(code in r, code);
    // The faucet's signature counter is there at 0 too, by kind.
    assert.is(metricValue(await scrape(node), 'quantum_canonical_sig_generated_total', 'kind="transaction"'), 0);
  });
});

rejected('REST POST /api/v1/transactions: each malformed body or envelope (400, 415) counts once as MALFORMED; a wrong from as INVALID_SENDER; admission refusals once', async () => {
  await withNode(async (node) => {
    const url = (path: string) => `${node.restUrl}${path}`;
    const before = rejections(await scrape(node));
    const tx = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 3n * GWEI });
    const bad: Array<[number, string, RequestInit]> = [
      [400, 'INVALID_JSON', { body: '{"raw": ', headers: { 'content-type': 'application/json' } }],
      [400, 'MALFORMED_INPUT', { body: '[1, 2]', headers: { 'content-type': 'application/json' } }],
      [400, 'MALFORMED_INPUT', { body: JSON.stringify({ raw: '0x01' }), headers: { 'content-type': 'application/json' } }],
      [400, 'MALFORMED_INPUT', { body: JSON.stringify({ raw: toHex(encodeTx(tx)).slice(0, -2) }), headers: { 'content-type': 'application/json' } }],
      [400, 'MALFORMED_INPUT', { body: JSON.stringify({ raw: 'zz' }), headers: { 'content-type': 'application/json' } }],
      [400, 'MALFORMED_INPUT', { body: JSON.stringify({ tx: { ...txToJson(tx), value: '-1' } }), headers: { 'content-type': 'application/json' } }],
    ];
    for (const [status, code, init] of bad) {
      const r = await fetch(url('/api/v1/transactions'), { method: 'POST', ...init });
      const body = (await r.json()) as { error: { code: string } };
      assert.is(r.status, status, JSON.stringify(body));
      assert.is(body.error.code, code);
    }
    const wrongFrom = await post(node, '/api/v1/transactions', { tx: { ...txToJson(tx), from: keys.accounts[1]!.address } });
    expectEnvelope(wrongFrom, 400, 'INVALID_SENDER');
    expectEnvelope(await submit(node, transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 1n })), 400, 'GAS_PRICE_TOO_LOW');
    assert.equal(delta(before, rejections(await scrape(node))), { MALFORMED: bad.length, INVALID_SENDER: 1, GAS_PRICE_TOO_LOW: 1 });
    // Other routes' bad input is not a transaction rejection.
    expectEnvelope(await post(node, '/api/v1/faucet/claim', { address: 'nope' }), 400, 'MALFORMED_INPUT');
    assert.equal(delta(before, rejections(await scrape(node))), { MALFORMED: bad.length, INVALID_SENDER: 1, GAS_PRICE_TOO_LOW: 1 });
  });
});

rejected('JSON-RPC: unparseable params of eth_sendRawTransaction and svc_sendTransaction count as MALFORMED, in a batch once each', async () => {
  await withNode(async (node) => {
    const before = rejections(await scrape(node));
    const tx = transfer(keys.accounts[0]!, { nonce: 0, gasPrice: 1n });
    assert.is((await rpc(node, 'eth_sendRawTransaction', ['0x1234'])).error.code, -32602);
    assert.is((await rpc(node, 'svc_sendTransaction', [{ nonce: 'x' }])).error.code, -32602);
    const batch = await http(node.rpcUrl, '/', {
      json: [
        { jsonrpc: '2.0', id: 1, method: 'eth_sendRawTransaction', params: [42] },
        { jsonrpc: '2.0', id: 2, method: 'eth_sendRawTransaction', params: ['0x'] },
        { jsonrpc: '2.0', id: 3, method: 'eth_sendRawTransaction', params: [toHex(encodeTx(tx))] },
        { jsonrpc: '2.0', id: 4, method: 'eth_chainId', params: [] },
      ],
    });
    assert.is(batch.status, 200);
    assert.equal(batch.body.map((r: { error?: { code: number; data?: { code: string } } }) => r.error?.data?.code ?? r.error?.code ?? null), ['MALFORMED_INPUT', 'MALFORMED_INPUT', 'GAS_PRICE_TOO_LOW', null]);
    assert.equal(delta(before, rejections(await scrape(node))), { MALFORMED: 4, GAS_PRICE_TOO_LOW: 1 });
  });
});

rejected('the per-client rate limit before parsing counts as RATE_LIMITED (REST 429, JSON-RPC), every submission once', async () => {
  // 1 per second with a burst of 2: a quick run of submissions meets the limit by the third.
  await withNode(
    async (node) => {
      const before = rejections(await scrape(node));
      const rest: number[] = [];
      while (!rest.includes(429) && rest.length < 20) rest.push((await post(node, '/api/v1/transactions', { raw: '0x01' })).status);
      const rpcCodes: string[] = [];
      while (!rpcCodes.includes('RATE_LIMITED') && rpcCodes.length < 20) rpcCodes.push((await rpc(node, 'eth_sendRawTransaction', ['0x01'])).error.data.code);
      assert.ok(rest.includes(429) && rpcCodes.includes('RATE_LIMITED'), `${rest} ${rpcCodes}`);
      const malformed = rest.filter((s) => s === 400).length + rpcCodes.filter((c) => c === 'MALFORMED_INPUT').length;
      assert.equal(delta(before, rejections(await scrape(node))), { MALFORMED: malformed, RATE_LIMITED: 2 });
    },
    { submitRatePerIp: 1 },
  );
});

rejected.run();
