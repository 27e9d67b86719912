/**
 * The keys of a validator process: opening each one's per-key half (RANDAO keeper: a file read,
 * no hashing), finding their registry indices (one listing for many keys), building their RANDAO
 * chains after start (one after another, in the worker of randao/builder.ts) and then checking
 * each key's RANDAO value with the beacon, and the key-count gauges.
 */
import { SvcError } from '../../core/errors.js';
import type { Genesis } from '../../core/genesis/genesis.js';
import { type BeaconClient, BeaconClientError } from '../../client/beacon.js';
import type { Logger } from '../../util/log.js';
import type { ValidatorMetrics } from './metrics.js';
import { RandaoChainBuilder } from './randao/builder.js';
import type { RandaoChain } from './randao/chain.js';
import { RandaoKeeper, type RecommitRelay } from './randao/recommit.js';
import { type KeyContext, ValidatorKey, type ValidatorKeys, withFields } from './validator-key.js';

/** What the key set needs from the process. */
export interface KeySetOptions {
  genesis: Genesis;
  keys: readonly ValidatorKeys[];
  /** What every key shares with the process. */
  keyCtx: KeyContext;
  log: Logger;
  metrics: ValidatorMetrics;
  beacon: BeaconClient;
  call: <T>(p: Promise<T>) => Promise<T>;
  failure: (what: string, err: unknown) => void;
  /** Deadline of the re-commitment's requests to the beacon's relay (which waits on execution). */
  recommitTimeoutMs: number;
  dataDir?: string | undefined;
  randaoChain?: RandaoChain | readonly (RandaoChain | undefined)[] | undefined;
  running: () => boolean;
}

/** Every key of a validator process and their start-up work. */
export class KeySet {
  /** The per-key halves, in the order given (empty until `open()`). */
  keys: ValidatorKey[] = [];
  readonly byAddress = new Map<string, ValidatorKey>();
  /** Resolves once every chain is restored or built. */
  chainsReady: Promise<void> = Promise.resolve();
  private build: Promise<void> = Promise.resolve();
  private readonly chainBuilder = new RandaoChainBuilder();

  /** The beacon's re-commitment relay, with the re-commitment's deadline. */
  private readonly relay: RecommitRelay;

  constructor(private readonly opts: KeySetOptions) {
    const b = opts.beacon;
    const timeout = { timeoutMs: opts.recommitTimeoutMs };
    this.relay = {
      recommitAccount: (address) => b.recommitAccount(address, timeout),
      submitRecommit: (raw) => b.submitRecommit(raw, timeout),
      recommitStatus: (hash) => b.recommitStatus(hash, timeout),
    };
  }

  /** Waits for the chain building and checks under way, then stops the builder's worker. */
  async close(): Promise<void> {
    await this.build;
    await this.chainBuilder.close();
  }

  /** Reads each key's RANDAO generation (a file read, no hashing) and makes its per-key half. */
  async open(): Promise<void> {
    const many = this.opts.keys.length > 1;
    const prebuilt = this.opts.randaoChain;
    const chains = prebuilt === undefined ? [] : Array.isArray(prebuilt) ? (prebuilt as readonly (RandaoChain | undefined)[]) : [prebuilt as RandaoChain];
    const keys: ValidatorKey[] = [];
    for (const [i, keys_] of this.opts.keys.entries()) {
      const log = many ? withFields(this.opts.log, { validator: keys_.address }) : this.opts.log;
      let vk: ValidatorKey | undefined;
      const randao = await RandaoKeeper.openDeferred(
        {
          genesis: this.opts.genesis,
          keys: keys_,
          relay: this.relay,
          log,
          dataDir: this.opts.dataDir,
          adoptLegacy: !many,
          onRemaining: (left) => {
            if (vk?.index !== undefined) this.opts.metrics.randaoLeft(vk.index, left);
          },
          onSubmitted: () => this.opts.metrics.randaoRecommits.inc(),
          onSigned: () => this.opts.metrics.signed('transaction'),
          buildChain: (seed, length, bits, generation) => this.chainBuilder.build(seed, length, bits, generation),
        },
        chains[i],
      );
      vk = new ValidatorKey(this.opts.keyCtx, keys_, randao, log);
      keys.push(vk);
      this.byAddress.set(vk.address, vk);
    }
    this.keys = keys;
  }

  /**
   * Every key's index: one key asks for itself (and checks its RANDAO value in the same answer);
   * several keys take one registry listing (a per-key lookup costs the beacon a duties and a
   * balance query each), falling back to asking per key if the beacon has no listing. An
   * unreachable beacon is reported once and nothing more is asked (the caller asks again later).
   * Returns the keys this call named whose RANDAO check is still to be made.
   */
  async lookUpIndices(): Promise<ValidatorKey[]> {
    const missing = this.keys.filter((k) => k.index === undefined);
    if (this.keys.length > 1) {
      try {
        const registry = await this.opts.call(this.opts.beacon.validators());
        const byAddress = new Map(registry.map((v) => [v.address, v]));
        for (const k of missing) {
          const v = byAddress.get(k.address);
          if (v) k.adoptIndex(v);
        }
        // Keys not listed (deposit not included yet) are asked again each slot.
        for (const k of missing) if (k.index === undefined) await k.ensureIndex();
        return missing.filter((k) => k.index !== undefined);
      } catch (err) {
        // Asking 64 keys one by one would only fail 64 times more.
        if (err instanceof BeaconClientError && err.transport) {
          this.opts.failure('looking up the validator indices', err);
          return [];
        }
        // An older beacon without the listing: each key asks for itself.
        this.opts.log.debug('no registry listing from the beacon: looking up each key', { code: err instanceof SvcError ? err.code : 'ERROR', error: (err as Error).message });
      }
    }
    await Promise.all(missing.map((k) => k.ensureIndex()));
    return [];
  }

  /**
   * Builds (or restores) the keys' RANDAO chains one after another in the background (in the
   * worker), then makes the RANDAO check of the keys in `check`; a proposal whose key is not
   * built yet asks for its chain first.
   */
  buildChains(check: readonly ValidatorKey[]): void {
    this.build = this.runBuild();
    this.checkAfterBuild(check);
  }

  /** Makes the RANDAO check of `keys` (named after start) once every chain is there, after the checks already queued. */
  checkAfterBuild(keys: readonly ValidatorKey[]): void {
    if (keys.length === 0) return;
    this.build = this.build.then(async () => {
      // The checks ask the beacon once per key: one after another, after every chain is there.
      for (const k of keys) {
        if (!this.opts.running()) return;
        await k.checkRandaoNow().catch((err: unknown) => this.opts.failure('checking the RANDAO value', err));
      }
    });
  }

  private async runBuild(): Promise<void> {
    let chainsReady!: () => void;
    this.chainsReady = new Promise<void>((ok) => (chainsReady = ok));
    try {
      for (const k of this.keys) {
        if (!this.opts.running()) return;
        await k.randao.ready().catch((err: Error) => k.log.error('cannot build the RANDAO chain: proposals of this key will fail', { error: err.message }));
      }
    } finally {
      chainsReady();
    }
  }

  /** Sets the key-count gauges. */
  countKeys(): void {
    this.opts.metrics.keys.set({ state: 'loaded' }, this.keys.length);
    this.opts.metrics.keys.set({ state: 'registered' }, this.keys.filter((k) => k.index !== undefined).length);
  }

  /** Asks the beacon again for the indices it has not named yet (in the background, each key on its lane). */
  lookUpMissingIndices(): void {
    for (const k of this.keys) {
      if (k.index !== undefined) continue;
      k.enqueue('looking up the validator index', async () => {
        if (!this.opts.running() || k.index !== undefined) return;
        if ((await k.ensureIndex()) !== undefined) this.countKeys();
      });
    }
  }
}
