/**
 * What one devnet node says about itself through its public interfaces: the beacon's head and
 * checkpoints and its P2P peers, execution's `/health` (peers, finalised block, pool). Shared by
 * `svc devnet status` and the dashboard's observer, so both report a node the same way.
 */
import { BeaconClient } from '../client/beacon.js';
import { ExecutionClient } from '../client/execution.js';
import type { BeaconHealthSummary } from '../client/beacon.js';
import type { HeadView } from '../api/beacon.js';
import { beaconRoutes } from '../api/routes/beacon.js';
import type { HealthView } from '../api/execution.js';
import type { ManifestNode } from './manifest.js';

/** One node's answers; a field is null (with the reason in `errors`) when its endpoint did not answer. */
export interface NodeProbe {
  head: HeadView | null;
  /** The beacon's own verdict (unhealthy while it cannot make progress). */
  beaconHealth: BeaconHealthSummary | null;
  /** Connected peers of the beacon's libp2p host (`/api/v1/p2p/peers`); null when it did not say. */
  beaconPeers: number | null;
  execution: HealthView | null;
  /** One line per layer that did not answer, naming it. */
  errors: string[];
}

/** Asks node `node` everything at once, each call bounded by `timeoutMs`. */
export async function probeNode(node: Pick<ManifestNode, 'endpoints'>, timeoutMs: number): Promise<NodeProbe> {
  const beacon = new BeaconClient(node.endpoints.beacon, { timeoutMs });
  const execution = new ExecutionClient(node.endpoints.execution, { timeoutMs });
  const errors: string[] = [];
  const caught = (what: string) => (err: Error): null => (errors.push(`${what}: ${err.message}`), null);
  const [head, beaconHealth, beaconPeers, exec] = await Promise.all([
    beacon.head().catch(caught('beacon')),
    // Its failure is the head's failure, reported once there.
    beacon.health().catch(() => null),
    // Unknown rather than an error: a beacon without P2P has no peers to list.
    beaconPeerCount(node.endpoints.beacon, timeoutMs).catch(() => null),
    execution.health().catch(caught('execution')),
  ]);
  return { head, beaconHealth, beaconPeers, execution: exec, errors };
}

/** The number of peers the beacon's peers route lists (the spec: an object with a `peers` array). */
export async function beaconPeerCount(beaconUrl: string, timeoutMs: number): Promise<number> {
  const route = beaconRoutes.peers;
  const what = `${route.method} ${route.path}`;
  const r = await fetch(`${beaconUrl}${route.path}`, { method: route.method, signal: AbortSignal.timeout(timeoutMs) });
  const body: unknown = await r.json();
  if (r.status !== 200) throw new Error(`${what} answered HTTP ${r.status}`);
  const peers = typeof body === 'object' && body !== null ? (body as { peers?: unknown }).peers : undefined;
  if (!Array.isArray(peers)) throw new Error(`${what} answered without a peers list`);
  return peers.length;
}
