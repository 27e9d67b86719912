/** Bootnodes: parsing `--bootnodes` entries (their redial schedule is the address book's). */
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { P2pError } from './errors.js';

/** A bootnode: where to dial it and the peer id its handshake must prove. */
export interface Bootnode {
  addr: Multiaddr;
  peerId: string;
}

/** Parses `--bootnodes` entries; each must name its peer id. */
export function parseBootnode(text: string): Bootnode {
  let addr: Multiaddr;
  try {
    addr = multiaddr(text);
  } catch (err) {
    throw new P2pError('P2P_BAD_BOOTNODE', `bootnode ${text} is not a multiaddr: ${(err as Error).message}`, { cause: err });
  }
  const p2p = addr.getComponents().find((c) => c.name === 'p2p');
  if (!p2p?.value) throw new P2pError('P2P_BAD_BOOTNODE', `bootnode ${text} has no /p2p/<peer id>`);
  try {
    peerIdFromString(p2p.value);
  } catch (err) {
    throw new P2pError('P2P_BAD_BOOTNODE', `bootnode ${text} has an invalid peer id`, { cause: err });
  }
  return { addr, peerId: p2p.value };
}

