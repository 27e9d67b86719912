/**
 * The testnet faucet: a real signed transfer from the genesis faucet account through the
 * admission pipeline, at most one per address per cooldown; claims persist across restarts.
 */
import { ExecutionError } from './errors.js';
import { normalizeAddress } from '../../core/crypto/address.js';
import { parseAddress } from '../../core/codec/json.js';
import { TX_BASE_GAS } from '../../core/constants.js';
import { signStandardTx, txHash } from '../../core/types/transaction.js';
import { toHex } from '../../core/codec/bytes.js';
import type { MlDsaKeyPair } from '../../core/crypto/mldsa.js';
import { Mutex } from '../../util/mutex.js';
import type { Admission } from './txpool/admission.js';
import type { ExecutionChain } from './chain.js';
import { Keys } from './store.js';
import { WriteBatch } from '../shared/store.js';

/** A successful claim. */
export interface FaucetClaim {
  address: string;
  tx_hash: string;
  amount: string;
}

export class Faucet {
  private readonly mutex = new Mutex();
  readonly address: string;
  private readonly amount: bigint;
  private readonly cooldownMs: number;

  constructor(
    private readonly chain: ExecutionChain,
    private readonly admission: Admission,
    private readonly key: MlDsaKeyPair | undefined,
    keyAddress: string | undefined,
    private readonly onSign: () => void,
  ) {
    const f = chain.genesis.config.faucet;
    this.address = f.address;
    this.amount = BigInt(f.amount);
    this.cooldownMs = f.cooldown_seconds * 1000;
    if (key && keyAddress !== f.address) {
      throw new ExecutionError('FAUCET_KEY_MISMATCH', `faucet keystore address ${keyAddress} is not the genesis faucet ${f.address}`);
    }
  }

  /** Whether a faucet key was loaded. */
  get enabled(): boolean {
    return this.key !== undefined;
  }

  /** Sends `amount` to `address` unless it claimed within the cooldown. */
  claim(input: unknown, now = Date.now()): Promise<FaucetClaim> {
    const address = normalizeAddress(input, 'address');
    return this.mutex.run(async () => {
      if (!this.key) throw new ExecutionError('FAUCET_DISABLED', 'faucet disabled: start the node with --faucet-keystore (svc genesis new writes keystores/faucet.json)');
      const last = await this.chain.store.get<{ at: number; tx_hash: string }>(Keys.faucetClaim(address));
      // The transfer is journaled with the claim, but the pool may evict it and the start-up
      // replay drops it once invalid: a claim whose transfer is neither pooled nor on chain was
      // lost, so it does not hold the address to its cooldown.
      if (last && now - last.at < this.cooldownMs && (this.admission.pool.has(last.tx_hash) || (await this.chain.txLocation(last.tx_hash)))) {
        throw new ExecutionError('FAUCET_COOLDOWN', `faucet cooldown: ${address} can claim again after ${new Date(last.at + this.cooldownMs).toISOString()}`);
      }
      const nonce = this.admission.pool.pendingNonce(this.address, this.admission.accountNonce(this.address));
      const tx = signStandardTx(
        { nonce, gasPrice: BigInt(this.chain.genesis.config.min_gas_price), gasLimit: TX_BASE_GAS, to: parseAddress(address, 'address'), value: this.amount, data: new Uint8Array(0) },
        this.key,
        this.chain.genesis.chain_id,
      );
      this.onSign();
      // The journal syncs the claim record before the transfer's journal record, in the same
      // group-commit write: a crash keeps both (the transfer comes back, the address stays on
      // cooldown), neither, or the claim alone, which the check above ignores (its transfer is
      // neither pooled nor on chain), so an answered claim always holds and a lost one never does.
      const claim = new WriteBatch().put(Keys.faucetClaim(address), { at: now, tx_hash: toHex(txHash(tx)) });
      const { hash } = await this.admission.submit(tx, 'faucet', { durableWith: claim });
      return { address, tx_hash: hash, amount: this.amount.toString() };
    });
  }
}

