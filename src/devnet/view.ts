/**
 * What the devnet dashboard and the NDJSON event stream show: a snapshot of a running devnet,
 * assembled by the observer from the nodes' public interfaces (REST, /ws) and the supervisor's
 * process table. Plain data, so the ink dashboard renders it and tests build it by hand.
 */

import type { ProcessStatus } from '../client/devnet-manifest.js';

export type { ProcessStatus };

/** One supervised process (execution, beacon, validators / validators-I holding a node's validators, validator-K, or `node` in single-process mode). */
export interface ProcessView {
  name: string;
  pid: number | null;
  status: ProcessStatus;
  /** How many times the supervisor restarted it (at most once per crash policy). */
  restarts: number;
  /** Absolute path of its log file. */
  log: string;
  /** Indices of the validators it holds (validator processes only). */
  validators?: number[];
}

/** One validator as the dashboard lists it. Counts are since this supervisor started. */
export interface ValidatorView {
  index: number;
  address: string;
  proposed: number;
  attested: number;
  /** Execution balance in wei (base-10 string); null until first read. */
  balance: string | null;
}

/** A line of the dashboard's "recent events" list. */
export interface EventLine {
  /** ISO 8601 UTC. */
  time: string;
  kind: 'started' | 'block' | 'finalized' | 'error' | 'crash' | 'restart' | 'info';
  text: string;
}

/** Public endpoints of the devnet. */
export interface Endpoints {
  execution: string;
  rpc: string;
  beacon: string;
  ws: string;
}

/** One node of a multi-node devnet (field names as in `svc devnet status --json`'s nodes[]). */
export interface NodeView {
  index: number;
  role: 'producer' | 'follower';
  /** Validators attached to its beacon. */
  validators: number[];
  head: { slot: number; index: number; root: string } | null;
  finalized_epoch: number | null;
  /** Connected P2P peers of its beacon and execution; null while unknown. */
  peers: { beacon: number | null; execution: number | null };
}

/** Everything the dashboard draws. */
export interface DevnetView {
  dir: string;
  chainId: string;
  endpoints: Endpoints;
  slot: number;
  epoch: number;
  head: { slot: number; index: number; root: string } | null;
  justifiedEpoch: number;
  finalizedEpoch: number;
  /** Pool size; null while execution is unreachable. */
  mempool: { pending: number; queued: number } | null;
  /** Node 0's beacon peers. */
  peers: number;
  /** Every node (one entry for a single-node devnet). */
  nodes: NodeView[];
  processes: ProcessView[];
  validators: ValidatorView[];
  /** Most recent last. */
  events: EventLine[];
}
