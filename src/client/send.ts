/**
 * Sending a value transaction through an execution node: local checks first, then the chain id
 * and nonce from the node, signing, submission, and optionally waiting for inclusion.
 */
import { SvcError } from '../core/errors.js';
import { chainIdBytes } from '../core/crypto/domain.js';
import { encodeTx } from '../core/types/transaction.js';
import { unlockWallet } from '../wallet/keystore.js';
import { buildValueTx, resolveSigningWallet, signValueTx, type ValueTxInput } from '../wallet/tx-builder.js';
import type { ExecutionClient } from './execution.js';
import type { PoolStatus, TxStatus } from '../api/execution.js';
import { hasCode } from '../api/errors.js';

export interface SendRequest {
  client: ExecutionClient;
  /** Signing wallet: name, address or file path. */
  from: string;
  /** The transaction; `nonce` omitted: the sender's pending nonce on the node. */
  input: Omit<ValueTxInput, 'nonce'> & { nonce?: string | undefined };
  /** Omitted: the node's chain id (GET /health). */
  chainId?: string | undefined;
  /** Asked only after every local and network check passed. */
  password: () => Promise<string>;
  /** Warnings for a human (stderr). */
  warn?: (line: string) => void;
}

/** A submitted transaction. */
export interface SendResult {
  hash: string;
  from: string;
  to: string | null;
  value: string;
  nonce: number;
  gas_limit: number;
  gas_price: string;
  chain_id: string;
  pool_status: PoolStatus;
  replaced?: string;
}

/**
 * Builds, signs and submits. Malformed input fails before any network call; an unreachable node
 * fails before the password is asked; admission errors carry the node's code and message.
 */
export async function sendValueTx(req: SendRequest): Promise<SendResult> {
  const fields = buildValueTx({ ...req.input, nonce: req.input.nonce ?? '0' });
  if (req.chainId !== undefined) chainIdBytes(req.chainId);
  const wallet = await resolveSigningWallet(req.from);
  const address = wallet.wallet.file.address;

  const health = await req.client.health();
  const chainId = req.chainId ?? health.chain_id;
  if (chainId !== health.chain_id) {
    req.warn?.(`warning: signing for chain id ${chainId}, but the node runs ${health.chain_id}: it will reject the signature`);
  }
  if (req.input.nonce === undefined) fields.nonce = BigInt((await req.client.account(address)).pending_nonce);

  const keys = await unlockWallet(wallet.wallet.file, await req.password());
  const signed = signValueTx(fields, keys.mldsa, chainId);
  // As SSZ bytes: half the body of hex JSON, and the node decodes it without parsing hex.
  const submitted = await req.client.submitRaw(encodeTx(signed.tx));
  return {
    hash: submitted.hash,
    from: keys.address,
    to: req.input.to === null ? null : req.input.to.toLowerCase(),
    value: fields.value.toString(),
    nonce: Number(fields.nonce),
    gas_limit: Number(fields.gasLimit),
    gas_price: fields.gasPrice.toString(),
    chain_id: chainId,
    pool_status: submitted.status,
    ...(submitted.replaced ? { replaced: submitted.replaced } : {}),
  };
}

export interface WaitOptions {
  /** Give up after this long (ms). */
  timeoutMs: number;
  /** Pause between polls (ms); default 250. */
  intervalMs?: number;
}

/** True once a transaction is in a canonical block. */
export function isIncluded(s: TxStatus): boolean {
  return s.state === 'Confirmed' || s.state === 'Finalized';
}

/** Polls the transaction until it is Confirmed or Finalized; TIMEOUT (with the last state) otherwise. */
export async function waitForInclusion(client: ExecutionClient, hash: string, opts: WaitOptions): Promise<TxStatus> {
  const deadline = Date.now() + opts.timeoutMs;
  const interval = opts.intervalMs ?? 250;
  let last: TxStatus | undefined;
  for (;;) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    last = await client.txStatus(hash, { timeoutMs: Math.max(1, Math.min(left, 10_000)) }).catch((err: SvcError) => {
      // A deadline hit mid-request ends the wait like any other timeout; other errors are real.
      if (hasCode(err, 'TIMEOUT') && Date.now() >= deadline) return last;
      throw err;
    });
    if (last && isIncluded(last)) return last;
    await new Promise((r) => setTimeout(r, Math.min(interval, Math.max(0, deadline - Date.now()))));
  }
  const state = last ? `${last.state}${last.pool_status ? `, ${last.pool_status}` : ''}` : 'not asked';
  throw new SvcError(
    'TIMEOUT',
    `transaction ${hash} was not included within ${Math.round(opts.timeoutMs / 1000)} s (last state: ${state}); check again with \`svc tx status ${hash}\``,
  );
}
