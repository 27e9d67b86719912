/**
 * The validator client's side of RANDAO re-commitment (core/consensus/recommit.ts): it keeps the
 * key's current hash chain and the next one, re-commits by itself when few reveals are left, and
 * reveals from whichever chain holds the value the beacon last accepted.
 *
 * - Generations: generation 0 is the genesis or deposit chain; generation g's secret is
 *   randaoSecretAt(key seed, g) (domain-separated SHA3-256 of the seed and g), so nothing secret
 *   is stored and a lost data directory costs nothing but a rebuild.
 * - Timing: once the chain holding the beacon's value has `recommitThreshold(n)` reveals left or
 *   fewer, the client signs a transaction to RANDAO_COMMIT_ADDRESS carrying generation g+1's
 *   commitment and submits it to execution. The reserve (min(RANDAO_RECOMMIT_RESERVE, n/2)
 *   reveals) is proposals, not slots: even a validator proposing every slot has that many slots
 *   for another validator to include it, and it takes effect as soon as a block includes it.
 * - Durability: the new generation number is written to `<data-dir>/randao/<address>.json`
 *   (atomic write, fsync) before the transaction is signed, so after a crash or restart the
 *   client still builds the chain a commitment on chain may name. It keeps generations g-1 and g,
 *   so a reorg that drops the including block still finds the old chain. A data directory made
 *   by a one-key client (`<data-dir>/randao-generation.json`) is adopted by the key a one-key
 *   process runs, and refused (LEGACY_RANDAO_GENERATION) by a many-key process when it names a
 *   generation above 0: which key it belongs to is not written in it.
 * - Start-up cost: a chain is n hashes (65,536 on the devnet, ~70 ms); its checkpoints are saved
 *   as `<data-dir>/randao/<address>-<generation>.chain` (2 KiB) and restored on the next start
 *   after one hash of checking. `openDeferred` returns at once and `ready()` builds what is
 *   missing in slices that leave the event loop free, so a process with many keys starts and
 *   proposes while chains are still being built.
 * - Retry: a re-commitment that has not taken effect after RECOMMIT_RETRY_EPOCHS epochs and whose
 *   transaction is unknown to execution or failed is submitted again (same commitment).
 * - Fees: the transaction pays 21,000 gas at the genesis minimum gas price from the validator's
 *   own account (genesis funds devnet validators; proposers earn fees and rewards).
 */
import { join } from 'node:path';
import { readFile, rm } from 'node:fs/promises';
import { parseHex, toHex } from '../../../core/codec/bytes.js';
import { RANDAO_COMMIT_ADDRESS, TX_BASE_GAS } from '../../../core/constants.js';
import { epochOfSlot, type Genesis } from '../../../core/genesis/genesis.js';
import { encodeTx, signStandardTx } from '../../../core/types/transaction.js';
import { SvcError } from '../../../core/errors.js';
import { ValidatorError } from '../errors.js';
import type { Logger } from '../../../util/log.js';
import { writeFileAtomic } from '../../../util/fs.js';
import type { BeaconClient } from '../../../client/beacon.js';
import type { WalletKeys } from '../../../wallet/derivation.js';
import { DEFAULT_CHECKPOINT_BITS, RandaoChain, RandaoChainError } from './chain.js';

/** Most reveals kept in reserve before re-committing; short chains keep half of theirs instead. */
export const RANDAO_RECOMMIT_RESERVE = 1024;
/** Epochs after which a submitted re-commitment that has not taken effect is checked and sent again. */
export const RECOMMIT_RETRY_EPOCHS = 2;
/** File of a one-key data directory (before many-key clients) holding the newest generation committed to. */
export const RANDAO_GENERATION_FILE = 'randao-generation.json';
/** Directory of the validator data directory holding each key's generation and chain checkpoints. */
export const RANDAO_DIR = 'randao';

/** The file holding the newest generation `address` committed to. */
export function randaoGenerationPath(dataDir: string, address: string): string {
  return join(dataDir, RANDAO_DIR, `${address.toLowerCase()}.json`);
}

/** The checkpoint cache of `address`'s chain of `generation`. */
export function randaoChainPath(dataDir: string, address: string, generation: number): string {
  return join(dataDir, RANDAO_DIR, `${address.toLowerCase()}-${generation}.chain`);
}

/** Re-commit once this many reveals or fewer are left on a chain of `length`. */
export function recommitThreshold(length: number): number {
  return Math.max(1, Math.min(RANDAO_RECOMMIT_RESERVE, Math.floor(length / 2)));
}

/** The beacon's re-commitment relay (node/beacon/recommit-relay.ts): the keeper's only way to execution. */
export type RecommitRelay = Pick<BeaconClient, 'recommitAccount' | 'submitRecommit' | 'recommitStatus'>;

/** Where the keeper sends its transaction and reports. */
export interface RandaoKeeperOptions {
  genesis: Genesis;
  keys: Pick<WalletKeys, 'address' | 'mldsa' | 'mldsaSeed'>;
  relay: RecommitRelay;
  log: Logger;
  /** Absent: the generation lives in memory only (it is re-derivable, but a restart then starts from generation 0). */
  dataDir?: string | undefined;
  /**
   * Whether this key may adopt a one-key data directory's `randao-generation.json` (default
   * true; a process running several keys passes false, as it cannot tell whose it is).
   */
  adoptLegacy?: boolean;
  /** Gauge of reveals left on the chain in use. */
  onRemaining?: (left: number) => void;
  /** Counts submitted re-commitment transactions. */
  onSubmitted?: () => void;
  /** Called for every re-commitment transaction signed (quantum_canonical_sig_generated_total). */
  onSigned?: () => void;
  checkpointBits?: number;
  /** Builds a chain not found in the data directory (default: on this thread, in slices). */
  buildChain?: (seed: Uint8Array, length: number, checkpointBits: number, generation: number) => Promise<RandaoChain>;
}

/** One validator's RANDAO chains across re-commitments. */
export class RandaoKeeper {
  /** Newest generation committed to (its chain may not have taken effect yet). */
  private newest = 0;
  /** Chains of generations newest-1 and newest (one at generation 0); empty until `ready()`. */
  private chains: RandaoChain[] = [];
  private building: Promise<void> | undefined;
  private inFlight = false;
  private submitted: { slot: number; hash: string } | undefined;
  private usedNewest = false;

  private constructor(
    private readonly opts: RandaoKeeperOptions,
    private readonly prebuilt: RandaoChain | undefined,
  ) {}

  /** Reads the persisted generation (0 when none) and builds its chain and the one before. */
  static async open(o: RandaoKeeperOptions, prebuilt?: RandaoChain): Promise<RandaoKeeper> {
    const k = await RandaoKeeper.openDeferred(o, prebuilt);
    await k.ready();
    return k;
  }

  /** Reads the persisted generation only; the chains come with `ready()`. */
  static async openDeferred(o: RandaoKeeperOptions, prebuilt?: RandaoChain): Promise<RandaoKeeper> {
    const k = new RandaoKeeper(o, prebuilt);
    k.newest = await k.readGeneration();
    return k;
  }

  /** True once the chains are built (reveals can be made without waiting). */
  get isReady(): boolean {
    return this.chains.length > 0;
  }

  /** Restores or builds the chains of generations newest-1 and newest (once; callers share the work). */
  ready(): Promise<void> {
    if (this.isReady) return Promise.resolve();
    this.building ??= (async () => {
      const chains: RandaoChain[] = [];
      if (this.newest > 0) chains.push(await this.chain(this.newest - 1));
      chains.push(await this.chain(this.newest));
      this.chains = chains;
    })().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  /** Chain length n of every generation (genesis `randao_chain_length`). */
  get length(): number {
    return this.opts.genesis.config.randao_chain_length;
  }

  /** Newest generation committed to. */
  get generation(): number {
    return this.newest;
  }

  /** The commitment of the oldest chain kept (what the beacon holds before any reveal). */
  firstCommitment(): Uint8Array {
    return this.built()[0]!.commitment();
  }

  /** The chain that holds `last` (newest first), undefined when none does. */
  chainOf(last: Uint8Array): RandaoChain | undefined {
    const chains = this.built();
    for (let i = chains.length - 1; i >= 0; i--) if (chains[i]!.holds(last)) return chains[i];
    return undefined;
  }

  // A caller that skipped `ready()` is a bug in this client, not a state of the chain.
  private built(): RandaoChain[] {
    if (!this.isReady) throw new ValidatorError('RANDAO_NOT_READY', 'RANDAO chains used before ready() resolved');
    return this.chains;
  }

  /**
   * The reveal that follows the beacon's `last` value. RANDAO_CHAIN_EXHAUSTED when that chain is
   * used up (the re-commitment has not taken effect), RANDAO_VALUE_NOT_ON_CHAIN when no kept chain holds it.
   */
  next(last: Uint8Array): Uint8Array {
    const chain = this.chainOf(last);
    if (!chain) throw new RandaoChainError('RANDAO_VALUE_NOT_ON_CHAIN', `value ${toHex(last)} is on none of this key's RANDAO chains (generations ${this.chains.map((c) => c.generation).join(', ')})`);
    if (chain.generation === this.newest && this.newest > 0 && !this.usedNewest) {
      this.usedNewest = true;
      this.opts.log.info('RANDAO re-commitment in effect: revealing from the new chain', { generation: chain.generation });
    }
    return chain.next(last);
  }

  /** Reveals left after `last` on the chain holding it, undefined when none holds it. */
  remaining(last: Uint8Array): number | undefined {
    return this.chainOf(last)?.remaining(last);
  }

  /**
   * Given the beacon's value for this validator (after its latest accepted reveal) at `slot`:
   * reports the reveals left and, when they are at the threshold or below, re-commits (or
   * re-sends a re-commitment that did not land). Never throws: failures are logged and retried
   * on the next call.
   */
  async check(last: Uint8Array, slot: number): Promise<void> {
    if (this.inFlight) return;
    this.inFlight = true;
    try {
      await this.ready();
      const chain = this.chainOf(last);
      if (!chain) return;
      const left = chain.remaining(last);
      this.opts.onRemaining?.(left);
      if (left > recommitThreshold(this.length)) return;
      if (chain.generation === this.newest) {
        await this.advance();
        await this.submit(slot, left);
      } else if (await this.shouldResend(slot)) {
        await this.submit(slot, left);
      }
    } catch (err) {
      this.opts.log.warn('RANDAO re-commitment not sent: retrying at the next proposal', { code: err instanceof SvcError ? err.code : 'ERROR', error: (err as Error).message });
    } finally {
      this.inFlight = false;
    }
  }

  // Durable before the transaction exists: whatever lands on chain, a restart builds its chain.
  private async advance(): Promise<void> {
    const next = this.newest + 1;
    if (this.opts.dataDir !== undefined) {
      await writeFileAtomic(randaoGenerationPath(this.opts.dataDir, this.opts.keys.address), JSON.stringify({ generation: next }) + '\n', { force: true });
    }
    const chain = await this.chain(next);
    this.chains = [this.chains[this.chains.length - 1]!, chain];
    this.newest = next;
    this.usedNewest = false;
    this.submitted = undefined;
  }

  private async shouldResend(slot: number): Promise<boolean> {
    const s = this.submitted;
    if (!s) return true;
    const epochs = epochOfSlot(this.opts.genesis, slot) - epochOfSlot(this.opts.genesis, s.slot);
    if (epochs < RECOMMIT_RETRY_EPOCHS) return false;
    const status = await this.opts.relay.recommitStatus(s.hash);
    // Still pooled, or included on a branch the beacon's head may not show yet: wait.
    if (status.state === 'Pending') return false;
    if (status.state !== 'unknown' && status.receipt?.status === 1) return false;
    this.opts.log.warn('RANDAO re-commitment did not take effect: sending it again', { tx: s.hash, state: status.state, error: status.receipt?.error ?? null });
    return true;
  }

  private async submit(slot: number, left: number): Promise<void> {
    const commitment = this.chains[this.chains.length - 1]!.commitment();
    const account = await this.opts.relay.recommitAccount(this.opts.keys.address);
    const tx = signStandardTx(
      {
        nonce: BigInt(account.pending_nonce),
        gasPrice: BigInt(this.opts.genesis.config.min_gas_price),
        gasLimit: TX_BASE_GAS,
        to: parseHex(RANDAO_COMMIT_ADDRESS, 'RANDAO_COMMIT_ADDRESS', 20),
        value: 0n,
        data: commitment,
      },
      this.opts.keys.mldsa,
      this.opts.genesis.chain_id,
    );
    this.opts.onSigned?.();
    const res = await this.opts.relay.submitRecommit(toHex(encodeTx(tx)));
    this.submitted = { slot, hash: res.hash };
    this.opts.onSubmitted?.();
    this.opts.log.info('RANDAO re-commitment submitted', { generation: this.newest, commitment: toHex(commitment), tx: res.hash, reveals_left: left, slot });
  }

  /** The chain of `generation`: the prebuilt one, the saved checkpoints, or built (and saved). */
  private async chain(generation: number): Promise<RandaoChain> {
    const p = this.prebuilt;
    if (p && p.generation === generation && p.length === this.length) return p;
    const bits = this.opts.checkpointBits ?? DEFAULT_CHECKPOINT_BITS;
    const seed = this.opts.keys.mldsaSeed;
    const path = this.opts.dataDir === undefined ? undefined : randaoChainPath(this.opts.dataDir, this.opts.keys.address, generation);
    if (path) {
      const saved = await readFile(path).catch(() => undefined);
      const restored = saved && RandaoChain.restore(seed, this.length, bits, generation, saved);
      if (restored) return restored;
    }
    const built = await (this.opts.buildChain ?? RandaoChain.build)(seed, this.length, bits, generation);
    // Only a cache: a failed write costs the next start a rebuild, never a reveal.
    if (path) await writeFileAtomic(path, built.serialize(), { force: true }).catch((err: Error) => this.opts.log.warn('could not save the RANDAO chain checkpoints', { path, error: err.message }));
    return built;
  }

  private async readGeneration(): Promise<number> {
    if (this.opts.dataDir === undefined) return 0;
    const path = randaoGenerationPath(this.opts.dataDir, this.opts.keys.address);
    const own = await readGenerationFile(path);
    if (own !== undefined) return own;
    const legacy = join(this.opts.dataDir, RANDAO_GENERATION_FILE);
    const old = await readGenerationFile(legacy);
    if (old === undefined) return 0;
    if (this.opts.adoptLegacy === false) {
      if (old === 0) return 0;
      throw new ValidatorError(
        'LEGACY_RANDAO_GENERATION',
        `${legacy} (from a one-key validator client) names RANDAO generation ${old} but not its key: run this data directory once with only that key's --keystore to adopt it, or move it to ${join(this.opts.dataDir, RANDAO_DIR)}/<address>.json`,
      );
    }
    // Written under the new name before the old one goes, so a crash in between keeps it.
    await writeFileAtomic(path, JSON.stringify({ generation: old }) + '\n', { force: true });
    await rm(legacy, { force: true });
    this.opts.log.info('RANDAO generation of a one-key data directory adopted', { address: this.opts.keys.address, generation: old, file: path });
    return old;
  }
}

/** The generation a file holds, undefined when there is no file. */
async function readGenerationFile(path: string): Promise<number | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ValidatorError('DATA_DIR_UNREADABLE', `cannot read ${path}: ${(err as Error).message}`);
  }
  let g: unknown;
  try {
    g = (JSON.parse(text) as { generation?: unknown }).generation;
  } catch {
    g = undefined;
  }
  if (typeof g !== 'number' || !Number.isSafeInteger(g) || g < 0) throw new ValidatorError('CORRUPT_DATA_DIR', `${path} does not hold {"generation": <non-negative integer>}`);
  return g;
}
