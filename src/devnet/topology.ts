/**
 * The shape of a multi-node devnet, as pure functions: which node each validator attaches to,
 * the ports each node prefers, the seed of each libp2p identity, and who dials whom. Kept apart
 * from lifecycle.ts (which spawns processes) so every rule here is unit-tested directly.
 */
import { createHash } from 'node:crypto';

/** Address the devnet's libp2p hosts listen on and dial: loopback only, like every other devnet port. */
export const P2P_LISTEN_HOST = '127.0.0.1';

/** Most producing nodes, and most followers, one devnet runs (each node is two processes on one machine). */
export const MAX_DEVNET_NODES = 16;

/** Layers that run a libp2p host. */
export type P2pLayer = 'execution' | 'beacon';

/** Every port one node listens on (the P2P ones only when P2P is on). */
export interface NodePorts {
  rest: number;
  rpc: number;
  beacon: number;
  beaconP2p: number;
  executionP2p: number;
}

/**
 * Node 0 prefers the spec's defaults (execution 8546/8545, beacon 8080, beacon P2P 9000 and
 * execution P2P 9001, the allocation `svc node all` makes); node I shifts the HTTP ports by
 * 100·I and the P2P ports by 2·I, so the ports of a devnet are predictable when they are free.
 */
export function preferredNodePorts(index: number): NodePorts {
  return { rest: 8546 + 100 * index, rpc: 8545 + 100 * index, beacon: 8080 + 100 * index, beaconP2p: 9000 + 2 * index, executionP2p: 9001 + 2 * index };
}

/** The producing node whose beacon validator `validator` attaches to: round-robin over the `producers`. */
export function validatorNode(validator: number, producers: number): number {
  if (!Number.isSafeInteger(producers) || producers < 1) throw new RangeError(`producers must be a positive integer, got ${producers}`);
  return validator % producers;
}

/** Validator indices of each of the `producers` nodes (validator i → node i mod producers). */
export function validatorsByNode(validators: readonly number[], producers: number): number[][] {
  const out: number[][] = Array.from({ length: producers }, () => []);
  for (const v of validators) out[validatorNode(v, producers)]!.push(v);
  return out;
}

/** Domain of the peer key seeds, so they never equal a hash taken for another purpose. */
const PEER_SEED_DOMAIN = 'svc-devnet/peer-key/v1';

/**
 * The 32-byte Ed25519 seed of node `index`'s `layer` host: SHA-256 over a domain tag, the genesis
 * hash, the node index and the layer. A devnet's peer ids are thereby known before any node
 * starts (they go into the manifest as bootnodes) and are the same every time the chain is
 * resumed; another chain gets other ids. Devnet keys only: the genesis hash is public.
 */
export function peerKeySeed(genesisHash: Uint8Array, index: number, layer: P2pLayer): Uint8Array {
  const idx = Buffer.alloc(4);
  idx.writeUInt32BE(index);
  return new Uint8Array(createHash('sha256').update(PEER_SEED_DOMAIN).update(genesisHash).update(idx).update(layer).digest());
}

/** The dialable multiaddr of a devnet host. */
export function loopbackMultiaddr(port: number, peerId: string): string {
  return `/ip4/${P2P_LISTEN_HOST}/tcp/${port}/p2p/${peerId}`;
}

/**
 * Whom node `index` dials, given every node's multiaddr for one layer: node 0 is everyone's
 * bootnode and dials all the others; node I also dials every node before it. Each pair of nodes
 * thus appears in the list of at least one side, so the full mesh forms and re-forms after any
 * node restarts (hosts redial their bootnodes while disconnected), without a discovery protocol.
 */
export function bootnodesOf(index: number, multiaddrs: readonly string[]): string[] {
  if (index === 0) return multiaddrs.slice(1);
  return multiaddrs.slice(0, index);
}
