/** The P2P flags of the node commands that run a libp2p host (`svc node execution`, `beacon`, `all`). */
import { Flags } from '@oclif/core';
import { UsageError } from './base.js';
import { DEFAULT_MAX_PEERS, DEFAULT_P2P_HOST, DEFAULT_P2P_PORT } from '../node/p2p/types.js';

/** A dialable bootnode: an IP or DNS TCP address ending in the peer id the handshake must prove. */
const BOOTNODE_RE = /^\/(ip4|ip6|dns|dns4|dns6)\/[^/\s]+\/tcp\/\d{1,5}\/p2p\/[A-Za-z0-9]+$/;


/** `--p2p-port`, `--p2p-host`, `--bootnodes`, `--max-peers` and `--no-p2p` of a node running one host. */
export function p2pFlags() {
  return {
    'p2p-port': Flags.integer({ description: 'libp2p TCP port (0: any free port)', default: DEFAULT_P2P_PORT, min: 0, max: 65535 }),
    'p2p-host': Flags.string({ description: 'interface libp2p listens on', default: DEFAULT_P2P_HOST }),
    bootnodes: Flags.string({ description: 'comma-separated multiaddrs /ip4/…/tcp/…/p2p/<peer id>: first contact; further peers are discovered from peers and kept in <data-dir>/p2p/address-book.json' }),
    'max-peers': Flags.integer({ description: 'peer target: discovery dials until this many peers are connected, and libp2p prunes connections above it (SPEC: 10 to 50)', default: DEFAULT_MAX_PEERS, min: 1, max: 1000 }),
    p2p: Flags.boolean({ description: 'run the libp2p host; --no-p2p runs the node alone', default: true, allowNo: true }),
  };
}

/**
 * `--p2p-key-file` of a node running one host: an identity provisioned elsewhere (an exported
 * network's genesis step writes every node's, so manifests name their peer ids in advance).
 */
export function p2pKeyFileFlag() {
  return {
    'p2p-key-file': Flags.string({ description: 'libp2p private key file to use instead of <data-dir>/p2p/peer-key (must exist; svc devnet genesis writes them)' }),
  };
}

/** Splits a comma-separated bootnode list, refusing (exit 2, naming `flag`) an entry that is not a dialable multiaddr with a peer id. */
export function parseBootnodes(value: string | undefined, flag: string): string[] {
  if (value === undefined) return [];
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  for (const addr of list) {
    if (!BOOTNODE_RE.test(addr)) throw new UsageError(`${flag}: ${JSON.stringify(addr)} is not a multiaddr like /ip4/10.0.0.1/tcp/9000/p2p/<peer id>`);
  }
  return list;
}
