/**
 * Gossip policy that does not depend on libp2p objects: message ids, the duplicate ledger, the fair
 * per-peer validation queue, and the peer-score parameters handed to gossipsub.
 */
import { sha3 } from '../../core/crypto/hash.js';
import { Topics } from './types.js';

/** Message id = SHA3-256 of the payload (DECISIONS.md, P2P): the same bytes are one message whoever sends them. */
export function gossipMessageId(data: Uint8Array): Uint8Array {
  return sha3(data);
}

/** Hex form of a message id (gossipsub's cache key and ours). */
export function messageIdHex(id: Uint8Array): string {
  return Buffer.from(id.buffer, id.byteOffset, id.byteLength).toString('hex');
}

/** How long a message id is remembered (gossipsub's seen cache and the duplicate ledger). */
export const SEEN_TTL_MS = 120_000;
/** Upper bound of remembered ids, whatever the rate: the oldest go first. */
export const SEEN_MAX_IDS = 200_000;

/**
 * Ids of messages already seen, for counting duplicates before gossipsub drops them (its seen cache
 * is private). Insertion order is expiry order, so pruning costs only what it removes.
 */
export class SeenIds {
  private readonly expiry = new Map<string, number>();

  constructor(
    private readonly ttlMs = SEEN_TTL_MS,
    private readonly maxIds = SEEN_MAX_IDS,
  ) {}

  /** Records `id`; true if it was already there (a duplicate). */
  observe(id: string, now = Date.now()): boolean {
    this.prune(now);
    const until = this.expiry.get(id);
    if (until !== undefined && until > now) return true;
    this.expiry.set(id, now + this.ttlMs);
    return false;
  }

  /** Whether `id` was recorded and has not expired (without recording it). */
  has(id: string, now = Date.now()): boolean {
    return (this.expiry.get(id) ?? 0) > now;
  }

  private prune(now: number): void {
    for (const [id, until] of this.expiry) {
      if (until > now && this.expiry.size <= this.maxIds) break;
      this.expiry.delete(id);
    }
  }

  get size(): number {
    return this.expiry.size;
  }
}

/** Validations run at once across all peers (the layers verify ML-DSA signatures; more only queues in them). */
export const VALIDATION_CONCURRENCY = 16;
/** Messages one peer may have waiting for validation; beyond it they are dropped (counted `queue_full`). */
export const MAX_QUEUED_PER_PEER = 512;
/** Bytes one peer may have waiting for validation. */
export const MAX_QUEUED_BYTES_PER_PEER = 32 * 1024 * 1024;

interface Job {
  bytes: number;
  run: () => void;
}

/**
 * Round-robin validation queue: each peer has its own bounded queue and the next free slot goes to
 * the next peer in turn, so a peer flooding messages gets its share of validation, not all of it.
 */
export class FairQueue {
  private readonly queues = new Map<string, { jobs: Job[]; bytes: number }>();
  /** Peers with queued work, in turn order. */
  private readonly ring: string[] = [];
  private running = 0;

  constructor(
    private readonly concurrency = VALIDATION_CONCURRENCY,
    private readonly maxPerPeer = MAX_QUEUED_PER_PEER,
    private readonly maxBytesPerPeer = MAX_QUEUED_BYTES_PER_PEER,
  ) {}

  /** Runs `task` when its turn comes; resolves `'queue_full'` at once if the peer's queue is full. */
  run<T>(peer: string, bytes: number, task: () => Promise<T>): Promise<T | 'queue_full'> {
    let q = this.queues.get(peer);
    if ((q?.jobs.length ?? 0) >= this.maxPerPeer || (q?.bytes ?? 0) + bytes > this.maxBytesPerPeer) return Promise.resolve('queue_full');
    return new Promise<T | 'queue_full'>((resolve, reject) => {
      const job: Job = {
        bytes,
        run: () => {
          task()
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.pump();
            });
        },
      };
      if (!q) {
        q = { jobs: [], bytes: 0 };
        this.queues.set(peer, q);
        this.ring.push(peer);
      }
      q.jobs.push(job);
      q.bytes += bytes;
      this.pump();
    });
  }

  private pump(): void {
    while (this.running < this.concurrency && this.ring.length > 0) {
      const peer = this.ring.shift()!;
      const q = this.queues.get(peer)!;
      const job = q.jobs.shift()!;
      q.bytes -= job.bytes;
      if (q.jobs.length > 0) this.ring.push(peer);
      else this.queues.delete(peer);
      this.running++;
      job.run();
    }
  }

  /** Messages waiting (not yet running) for `peer`. */
  queued(peer: string): number {
    return this.queues.get(peer)?.jobs.length ?? 0;
  }
}

/**
 * Per-topic score parameters (gossipsub v1.1). Invalid deliveries (P4, squared) dominate: three
 * rejected messages in a short time graylist a peer. Mesh-delivery deficits (P3) are off: blocks
 * come once a slot and a quiet devnet would otherwise penalise honest peers.
 */
export function topicScoreParams(): Record<string, TopicScoreParamsShape> {
  const params: TopicScoreParamsShape = {
    topicWeight: 1,
    timeInMeshWeight: 0.01,
    timeInMeshQuantum: 1000,
    timeInMeshCap: 100,
    firstMessageDeliveriesWeight: 0.5,
    firstMessageDeliveriesDecay: 0.9,
    firstMessageDeliveriesCap: 20,
    meshMessageDeliveriesWeight: 0,
    meshMessageDeliveriesDecay: 0.9,
    meshMessageDeliveriesCap: 1,
    meshMessageDeliveriesThreshold: 0,
    meshMessageDeliveriesWindow: 10,
    meshMessageDeliveriesActivation: 5000,
    meshFailurePenaltyWeight: 0,
    meshFailurePenaltyDecay: 0.9,
    invalidMessageDeliveriesWeight: -10,
    invalidMessageDeliveriesDecay: 0.99,
  };
  return Object.fromEntries(Object.values(Topics).map((t) => [t, { ...params }]));
}

/** Gossipsub's TopicScoreParams (declared here so this module needs no libp2p import). */
export interface TopicScoreParamsShape {
  topicWeight: number;
  timeInMeshWeight: number;
  timeInMeshQuantum: number;
  timeInMeshCap: number;
  firstMessageDeliveriesWeight: number;
  firstMessageDeliveriesDecay: number;
  firstMessageDeliveriesCap: number;
  meshMessageDeliveriesWeight: number;
  meshMessageDeliveriesDecay: number;
  meshMessageDeliveriesCap: number;
  meshMessageDeliveriesThreshold: number;
  meshMessageDeliveriesWindow: number;
  meshMessageDeliveriesActivation: number;
  meshFailurePenaltyWeight: number;
  meshFailurePenaltyDecay: number;
  invalidMessageDeliveriesWeight: number;
  invalidMessageDeliveriesDecay: number;
}

/** Score thresholds: below `graylist` a peer's RPCs are ignored entirely. */
export const SCORE_THRESHOLDS = {
  gossipThreshold: -20,
  publishThreshold: -40,
  graylistThreshold: -80,
  acceptPXThreshold: 100,
  opportunisticGraftThreshold: 5,
} as const;

/** Penalty points per offence (`penalise`); the app-specific gossipsub score is minus the points. */
export const PENALTY_POINTS = 10;
/** Points at which a peer is disconnected and banned. */
export const DISCONNECT_POINTS = 100;
/** Points halve over this time, so an occasional fault is forgiven and a stream of them is not. */
export const PENALTY_HALF_LIFE_MS = 60_000;
/** How long a disconnected offender is refused (dial and inbound). */
export const BAN_MS = 60_000;

/** Decaying penalty points per peer. */
export class PenaltyBook {
  private readonly points = new Map<string, { value: number; at: number }>();

  constructor(private readonly halfLifeMs = PENALTY_HALF_LIFE_MS) {}

  /** Current points of `peer`. */
  get(peer: string, now = Date.now()): number {
    const p = this.points.get(peer);
    if (!p) return 0;
    const value = p.value * Math.pow(0.5, (now - p.at) / this.halfLifeMs);
    if (value < 0.5) {
      this.points.delete(peer);
      return 0;
    }
    return value;
  }

  /** Adds points; returns the new total. */
  add(peer: string, points: number, now = Date.now()): number {
    const value = this.get(peer, now) + points;
    this.points.set(peer, { value, at: now });
    return value;
  }

  /** Forgets a peer (after its ban: it starts clean). */
  clear(peer: string): void {
    this.points.delete(peer);
  }
}
