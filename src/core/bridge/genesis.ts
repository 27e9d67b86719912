/**
 * The bridge account's storage a genesis document's counterparts start with (docs/bridge.md
 * "Genesis counterparts"): the words a signed registration of each would write. Both the
 * execution's genesis state and the genesis state root computed from the document alone
 * (src/core/state/genesis-root.ts) come from here, so they cannot disagree. Pure: no I/O.
 */
import { parseHex } from '../codec/bytes.js';
import { HASH_BYTES } from '../constants.js';
import type { Genesis } from '../genesis/genesis.js';
import { REGISTERED_WORD, allowanceSlot, amountWord, committedSlot, counterpartSlot, ledgerSlot } from './types.js';

/**
 * The non-zero bridge storage words (slot, value) of `genesis`'s counterparts: each registered,
 * its allowance as its ledger and allowance words, and their sum as the committed word. Empty
 * when the genesis lists none.
 */
export function genesisBridgeStorage(genesis: Pick<Genesis, 'bridge_counterparts'>): Array<readonly [Uint8Array, Uint8Array]> {
  const out: Array<readonly [Uint8Array, Uint8Array]> = [];
  let committed = 0n;
  for (const c of genesis.bridge_counterparts ?? []) {
    const h = parseHex(c.genesis_hash, 'genesis_hash', HASH_BYTES);
    const allowance = BigInt(c.allowance);
    out.push([counterpartSlot(h), REGISTERED_WORD]);
    if (allowance > 0n) out.push([ledgerSlot(h), amountWord(allowance)], [allowanceSlot(h), amountWord(allowance)]);
    committed += allowance;
  }
  if (committed > 0n) out.push([committedSlot(), amountWord(committed)]);
  return out;
}
