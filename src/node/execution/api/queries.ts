/**
 * The execution API's read-side queries over the node's modules: a transaction's lifecycle, an
 * account, a block by id and its view, and health. REST and JSON-RPC share them.
 */
import { ExecutionError } from '../errors.js';
import { blockToJson } from '../../../core/types/block.js';
import { txToJson } from '../../../core/types/transaction-json.js';
import type { AccountView, BlockView, HealthView, TxStatus } from '../../../api/execution.js';
import type { BlockRecord } from '../chain.js';
import type { ExecutionModules } from './modules.js';

/** Lifecycle of a transaction by hash: reads its location, receipt and envelope, never its block. */
export async function txStatus(m: ExecutionModules, hash: string): Promise<TxStatus> {
  await m.enginePriority.idle();
  const loc = await m.chain.txLocation(hash);
  if (loc) {
    const found = await m.chain.blocks.entry(loc.block, loc.index);
    if (!found) throw new ExecutionError('CORRUPT_DB', `transaction ${hash} is indexed at ${loc.block}:${loc.index}, which is not stored`);
    const { tx, receipt } = found;
    const finalized = receipt.blockNumber <= m.chain.finalized().index;
    return { hash, state: finalized ? 'Finalized' : 'Confirmed', tx: txToJson(tx), receipt, block: { hash: loc.block, number: receipt.blockNumber } };
  }
  const entry = m.admission.pool.get(hash);
  if (entry) return { hash, state: 'Pending', pool_status: m.admission.statusOf(entry), tx: txToJson(entry.tx) };
  return { hash, state: 'unknown' };
}

/** Balance and nonces of an address at the head. */
export function account(m: ExecutionModules, address: string): AccountView {
  const acc = m.chain.headState().account(address);
  return { address, balance: acc.balance.toString(), nonce: Number(acc.nonce), pending_nonce: Number(m.admission.pool.pendingNonce(address, acc.nonce)) };
}

/** Resolves `latest`, `finalized`, `earliest`, a height or a hash to a block record. */
export async function resolveBlock(m: ExecutionModules, id: string): Promise<BlockRecord | undefined> {
  const chain = m.chain;
  await m.enginePriority.idle();
  if (id === 'latest' || id === 'pending') return chain.record(chain.head().hash);
  if (id === 'finalized' || id === 'safe') return chain.record(chain.finalized().hash);
  if (id === 'earliest') return chain.record(chain.genesisHash);
  if (/^0x[0-9a-fA-F]{64}$/.test(id)) return chain.record(id.toLowerCase());
  if (/^(0|[1-9][0-9]{0,15})$/.test(id)) {
    const h = await chain.canonicalHash(Number(id));
    return h ? chain.record(h) : undefined;
  }
  throw new ExecutionError('INVALID_BLOCK_ID', `block id must be a number, a 0x hash, latest, finalized or earliest; got ${JSON.stringify(id)}`);
}

/** A block with metadata (the view carries the whole block, so the whole block is read). */
export async function blockView(m: ExecutionModules, r: BlockRecord): Promise<BlockView> {
  const chain = m.chain;
  const [block, transactions] = await Promise.all([chain.blocks.block(r.hash), chain.blocks.txHashes(r.hash)]);
  const canonical = (await chain.canonicalHash(r.index)) === r.hash;
  return {
    hash: r.hash,
    number: r.index,
    parent_hash: r.parent,
    timestamp: r.timestamp,
    proposer: r.proposer,
    state_root: r.state_root,
    gas_used: r.gas_used,
    fees: r.fees,
    transactions,
    canonical,
    finalized: r.index <= chain.finalized().index && canonical,
    block: block ? blockToJson(block) : null,
  };
}

/** Health summary (spec fields plus chain id and finality). */
export function health(m: ExecutionModules): HealthView {
  const head = m.chain.head();
  const pool = m.admission.pool;
  const { pending, queued } = pool.counts(m.admission.accountNonce);
  return {
    status: 'healthy',
    layer: 'execution',
    latest_block: head.index,
    peers: m.peerCount(),
    chain_id: m.chain.genesis.chain_id,
    head_hash: head.hash,
    finalized_block: m.chain.finalized().index,
    mempool: pool.size,
    mempool_pending: pending,
    mempool_queued: queued,
  };
}
