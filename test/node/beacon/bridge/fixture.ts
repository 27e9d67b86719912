/**
 * Bridge receipts as execution emits them (not a test file itself): an ImportResult receipt of a
 * bridge operation whose one log is built by the core's bridgeLog over real BID fields, for
 * feeding the beacon's state machine where no execution with the bridge runs.
 */
import { toHex } from '../../../../src/core/codec/bytes.js';
import { BRIDGE_ADDRESS } from '../../../../src/core/constants.js';
import { type BidFields, bidId, bridgeLog } from '../../../../src/core/bridge/types.js';
import type { Receipt } from '../../../../src/api/execution.js';

/** A receipt of `kind` in `block` whose log says `event` about `f` (no log when it failed, as execution does). */
export function bridgeReceipt(kind: Receipt['kind'], event: 'Locked' | 'Released' | 'Completed' | 'Refunded', f: BidFields, block: { hash: string; index: number }, status: 0 | 1 = 1): Receipt {
  const l = bridgeLog({ event, bid: bidId(f), fields: f });
  // A transaction hash per operation: the lock's is the BID's lock_tx, the others differ from it.
  const tx = kind === 'bridge_lock' ? toHex(f.lockTx) : toHex(f.lockTx.map((b, i) => (i === 0 ? b ^ kind.length : b)));
  return {
    transactionHash: tx,
    transactionIndex: 0,
    blockHash: block.hash,
    blockNumber: block.index,
    from: toHex(f.sender),
    to: BRIDGE_ADDRESS,
    kind,
    status,
    gasUsed: 21_000,
    cumulativeGasUsed: 21_000,
    effectiveGasPrice: '1',
    fee: '21000',
    contractAddress: null,
    logs: status === 1 ? [{ address: BRIDGE_ADDRESS, topics: l.topics.map((t) => toHex(t)), data: toHex(l.data), blockNumber: block.index, blockHash: block.hash, transactionHash: tx, transactionIndex: 0, logIndex: 0 }] : [],
  };
}
