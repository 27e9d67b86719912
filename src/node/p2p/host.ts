/**
 * Entry point of the P2P host. It installs the `Promise.withResolvers` polyfill and only then loads
 * libp2p (dynamic import), so importing this module never evaluates libp2p on Node 20 first.
 */
import './polyfill.js';
import type { P2pHost, P2pOptions } from './types.js';

/** Starts the libp2p host (TCP, yamux, hybrid Noise + ML-KEM-1024, identify, gossipsub). A busy port is `P2P_PORT_IN_USE`. */
export async function startP2p(options: P2pOptions): Promise<P2pHost> {
  const { createHost } = await import('./node.js');
  return createHost(options);
}

export { HYBRID_NOISE_PROTOCOL } from './protocol-id.js';
