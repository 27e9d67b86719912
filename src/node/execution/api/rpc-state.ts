/**
 * JSON-RPC methods over state, contracts, logs and fees: eth_getBalance and eth_getTransactionCount
 * at any block, eth_getCode, eth_getStorageAt, eth_getProof, eth_call, eth_estimateGas,
 * eth_getLogs, eth_feeHistory and eth_syncing. Parameters are validated before anything is read.
 */
import type { LogJson } from '../../../api/execution.js';
import { toHex } from '../../../core/codec/bytes.js';
import type { ExecutionModules } from './modules.js';
import { account } from './queries.js';
import { topicsMatch } from '../logs.js';
import { qty, rpcLog } from './rpc-format.js';
import {
  address,
  type BlockSelector,
  blockSelector,
  callRequest,
  logFilter,
  type Arity,
  type Method,
  param,
  quantity,
  resolveSelector,
  RpcCode,
  RpcError,
  storageKey,
} from './rpc-params.js';

/** Most blocks one eth_feeHistory answers for (more are truncated, as geth does); fewer when percentiles make it read receipts. */
export const FEE_HISTORY_MAX_BLOCKS = 1024;
export const FEE_HISTORY_MAX_BLOCKS_WITH_REWARDS = 128;
const MAX_PERCENTILES = 100;
/** Most storage keys one eth_getProof may ask for. */
export const MAX_PROOF_KEYS = 256;

const selector = (allowHash = true) => (v: unknown) => blockSelector(v, allowHash);
const isHead = (sel: BlockSelector) => 'tag' in sel && (sel.tag === 'latest' || sel.tag === 'pending');

/** The height a range bound names (a number past the head stays as it is: the range is clamped later). */
/** A storage value as a 32-byte 0x word. */
function word32(value: string): string {
  return '0x' + BigInt(value).toString(16).padStart(64, '0');
}

async function boundHeight(node: ExecutionModules, sel: BlockSelector): Promise<number> {
  if ('number' in sel) return sel.number;
  return (await resolveSelector(node, sel)).index;
}

function percentiles(v: unknown): number[] {
  if (!Array.isArray(v)) throw new Error('expected an array of percentiles');
  if (v.length > MAX_PERCENTILES) throw new Error(`at most ${MAX_PERCENTILES} percentiles`);
  let last = -1;
  return v.map((p) => {
    if (typeof p !== 'number' || !Number.isFinite(p) || p < 0 || p > 100) throw new Error('each percentile must be a number in 0..100');
    if (p < last) throw new Error('percentiles must be in increasing order');
    last = p;
    return p;
  });
}

/** Priority fees (gas price above the floor) at each percentile of a block's gas, Ethereum's weighting. */
function rewardsAt(txs: Array<{ price: bigint; gas: number }>, floor: bigint, ps: number[], gasUsed: number): string[] {
  if (txs.length === 0 || gasUsed === 0) return ps.map(() => '0x0');
  const sorted = [...txs].sort((a, b) => (a.price < b.price ? -1 : a.price > b.price ? 1 : 0));
  let i = 0;
  let cumulative = sorted[0]!.gas;
  return ps.map((p) => {
    const threshold = (gasUsed * p) / 100;
    while (cumulative < threshold && i < sorted.length - 1) cumulative += sorted[++i]!.gas;
    const tip = sorted[i]!.price - floor;
    return qty(tip > 0n ? tip : 0n);
  });
}

export const STATE_METHODS = {
  eth_getBalance: async (p, n, _c) => {
    const a = param(p, 0, address, 'address')!;
    const sel = param(p, 1, selector(), 'block', true) ?? { tag: 'latest' };
    if (isHead(sel)) return qty(BigInt(account(n, a).balance));
    return qty((await n.contracts.account(await resolveSelector(n, sel), a)).balance);
  },
  eth_getTransactionCount: async (p, n, _c) => {
    const a = param(p, 0, address, 'address')!;
    const sel = param(p, 1, selector(), 'block', true) ?? { tag: 'latest' };
    if (isHead(sel)) {
      const acc = account(n, a);
      return qty('tag' in sel && sel.tag === 'pending' ? acc.pending_nonce : acc.nonce);
    }
    return qty((await n.contracts.account(await resolveSelector(n, sel), a)).nonce);
  },
  eth_getCode: async (p, n, _c) => {
    const a = param(p, 0, address, 'address')!;
    const block = await resolveSelector(n, param(p, 1, selector(), 'block', true) ?? { tag: 'latest' });
    return toHex(await n.contracts.code(block, a));
  },
  eth_getStorageAt: async (p, n, _c) => {
    const a = param(p, 0, address, 'address')!;
    const key = param(p, 1, storageKey, 'storage key')!;
    const block = await resolveSelector(n, param(p, 2, selector(), 'block', true) ?? { tag: 'latest' });
    return toHex(await n.contracts.storage(block, a, key));
  },
  eth_getProof: async (p, n, _c) => {
    const a = param(p, 0, address, 'address')!;
    const keys = param(
      p,
      1,
      (v) => {
        if (!Array.isArray(v)) throw new Error('expected an array of storage keys');
        if (v.length > MAX_PROOF_KEYS) throw new Error(`at most ${MAX_PROOF_KEYS} storage keys`);
        return v.map(storageKey);
      },
      'storage keys',
    )!;
    const block = await resolveSelector(n, param(p, 2, selector(), 'block', true) ?? { tag: 'latest' });
    const proof = await n.contracts.proof(block, a, keys);
    return {
      address: proof.address,
      accountProof: proof.accountProof,
      balance: qty(BigInt(proof.balance)),
      codeHash: proof.codeHash,
      nonce: qty(proof.nonce),
      storageHash: proof.storageHash,
      // 32-byte values (EIP-1186 as verifyProof in core/state/trie.ts checks them): a quantity
      // would drop leading zeros, and the proof then no longer verifies against its leaf.
      storageProof: proof.storageProof.map((s) => ({ key: s.key, value: word32(s.value), proof: s.proof })),
      stateRoot: proof.stateRoot,
      blockHash: block.hash,
      blockNumber: qty(block.index),
    };
  },
  eth_call: async (p, n, c) => {
    const req = param(p, 0, callRequest, 'call object')!;
    const block = await resolveSelector(n, param(p, 1, selector(), 'block', true) ?? { tag: 'latest' });
    return toHex((await n.contracts.call(block, req, c.client)).returnData);
  },
  eth_estimateGas: async (p, n, c) => {
    const req = param(p, 0, callRequest, 'call object')!;
    const block = await resolveSelector(n, param(p, 1, selector(), 'block', true) ?? { tag: 'latest' });
    return qty(await n.contracts.estimateGas(block, req, c.client));
  },
  eth_getLogs: async (p, n, _c) => {
    const f = param(p, 0, logFilter, 'filter')!;
    let logs: LogJson[];
    if ('blockHash' in f.range) {
      const block = await resolveSelector(n, { hash: f.range.blockHash, requireCanonical: false });
      const canonical = block.tx_count > 0 && (await n.chain.canonicalHash(block.index)) === block.hash;
      const all = await n.logs.ofStoredBlock(block, canonical, () => n.chain.blocks.receipts(block.hash));
      const wanted = new Set(f.addresses);
      logs = all.filter((l) => (wanted.size === 0 || wanted.has(l.address)) && topicsMatch(l, f.topics));
    } else {
      const from = await boundHeight(n, f.range.from);
      const requested = await boundHeight(n, f.range.to);
      if (from > requested) throw new RpcError(RpcCode.InvalidParams, `invalid filter: fromBlock 0x${from.toString(16)} is after toBlock 0x${requested.toString(16)}`);
      // The range cap applies to the range asked for, so a query's cost is bounded before the chain grows into it.
      n.logs.checkRange(from, requested);
      const to = Math.min(requested, n.chain.head().index);
      logs = from > to ? [] : await n.logs.query({ fromBlock: from, toBlock: to, addresses: f.addresses, topics: f.topics });
    }
    return logs.map((l) => rpcLog(l));
  },
  eth_feeHistory: async (p, n) => {
    const count = Number(param(p, 0, quantity(32), 'block count')!);
    const newest = await resolveSelector(n, param(p, 1, selector(false), 'newest block')!);
    const ps = param(p, 2, percentiles, 'reward percentiles', true);
    const cap = ps ? FEE_HISTORY_MAX_BLOCKS_WITH_REWARDS : FEE_HISTORY_MAX_BLOCKS;
    const blocks = Math.min(count, cap, newest.index + 1);
    const floor = BigInt(n.chain.genesis.config.min_gas_price);
    const maxGas = n.chain.genesis.config.max_gas_per_block;
    const oldest = newest.index - blocks + 1;
    const gasUsedRatio: number[] = [];
    const reward: string[][] = [];
    for (let h = oldest; h <= newest.index; h++) {
      const r = h === newest.index ? newest : await resolveSelector(n, { number: h });
      gasUsedRatio.push(r.gas_used / maxGas);
      if (ps) {
        const receipts = r.tx_count === 0 ? [] : await n.chain.blocks.receipts(r.hash);
        reward.push(rewardsAt(receipts.map((x) => ({ price: BigInt(x.effectiveGasPrice), gas: x.gasUsed })), floor, ps, r.gas_used));
      }
    }
    return {
      oldestBlock: qty(blocks === 0 ? newest.index : oldest),
      // No fee market: every transaction pays at least the genesis minimum gas price, shown as the base fee.
      baseFeePerGas: Array.from({ length: blocks + 1 }, () => qty(floor)),
      gasUsedRatio,
      ...(ps ? { reward } : {}),
    };
  },
  // The execution node has no sync phase of its own: the beacon node drives it block by block.
  eth_syncing: () => false,
} satisfies Record<string, Method>;

/** Most parameters of each state method (rpc.ts refuses more, as geth does). */
export const STATE_ARITY: { readonly [K in keyof typeof STATE_METHODS]: Arity } = {
  eth_getBalance: 2,
  eth_getTransactionCount: 2,
  eth_getCode: 2,
  eth_getStorageAt: 3,
  eth_getProof: 3,
  eth_call: 2,
  eth_estimateGas: 2,
  eth_getLogs: 1,
  eth_feeHistory: 3,
  eth_syncing: 0,
};
