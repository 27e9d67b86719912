/**
 * The ingress of a transaction a peer sent, by gossip or the pool exchange: the full admission
 * pipeline, and the verdict that says whether the peer is to blame for a refusal.
 */
import { toHex } from '../../../core/codec/bytes.js';
import { sha3 } from '../../../core/crypto/hash.js';
import { MalformedError, SvcError, TxError, type TxErrorName } from '../../../core/errors.js';
import { decodeTxViews, type Transaction } from '../../../core/types/transaction.js';
import type { Logger } from '../../../util/log.js';
import type { PriorityGate } from '../../../util/priority-gate.js';
import type { GossipVerdict } from '../../p2p/types.js';
import type { Admission } from './admission.js';

/** What admitting a peer's transaction needs from the node. */
export interface PeerTxDeps {
  admission: Admission;
  /** Peers' transactions are public work: they wait while engine calls are in flight. */
  enginePriority: PriorityGate;
  log: Logger;
}

/**
 * Failures the bytes alone prove, whatever the sender's view of the chain: the sender relayed (or
 * made) an invalid transaction and is penalised. Everything else (nonce already used, balance
 * spent, pool or queue bounds, already known, a feature this node lacks, its own storage failing)
 * depends on state or local policy, and an honest peer may relay it: ignored.
 */
const REJECTED_TX_ERRORS: ReadonlySet<TxErrorName> = new Set(['ErrInvalidSignature', 'ErrInvalidSender', 'ErrGasTooLow', 'ErrGasTooHigh', 'ErrGasPriceTooLow']);

/** The gossip verdict of an admission failure, and the reason it is counted under. */
export function verdictOfRefusal(err: unknown): { verdict: Exclude<GossipVerdict, 'accept'>; reason: string } {
  if (err instanceof MalformedError) return { verdict: 'reject', reason: err.code };
  if (err instanceof TxError) return { verdict: REJECTED_TX_ERRORS.has(err.specName) ? 'reject' : 'ignore', reason: err.code };
  if (err instanceof SvcError) return { verdict: 'ignore', reason: err.code };
  return { verdict: 'ignore', reason: 'INTERNAL' };
}

/** An envelope a peer sent, and what admission made of it (a gossip verdict and the reason it is counted under). */
export interface PeerTxOutcome {
  verdict: GossipVerdict;
  reason: string;
}

/**
 * The full admission of one envelope a peer sent, by gossip (`p2p`) or the pool exchange
 * (`pool`): the ingress of every transaction that did not come from a local client. Never throws.
 */
export async function admitFromPeer(deps: PeerTxDeps, data: Uint8Array, from: string, source: 'p2p' | 'pool'): Promise<PeerTxOutcome> {
  const { admission, enginePriority, log } = deps;
  // The transaction hash is the hash of the envelope: a pooled duplicate costs one hash, no
  // decoding and no signature check.
  if (admission.pool.has(toHex(sha3(data)))) return { verdict: 'ignore', reason: 'ALREADY_KNOWN' };
  // A copy: the pool and the journal keep it, and the host's buffer may be a slice of a larger
  // one. The transaction's fields are views into the copy, so the pool holds the bytes once.
  const envelope = new Uint8Array(data); // slice() of a Buffer would be a view of it
  let tx: Transaction;
  try {
    tx = decodeTxViews(envelope);
  } catch (err) {
    log.debug('peer tx malformed', { from, source, error: (err as Error).message });
    return { verdict: 'reject', reason: verdictOfRefusal(err).reason };
  }
  await enginePriority.idle();
  try {
    await admission.submit(tx, source, { envelope });
    return { verdict: 'accept', reason: 'ADMITTED' };
  } catch (err) {
    const outcome = verdictOfRefusal(err);
    if (outcome.reason === 'INTERNAL') log.warn('peer tx failed', { from, source, error: (err as Error).message });
    return outcome;
  }
}

