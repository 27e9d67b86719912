/**
 * Peer exchange (`/service/req/peers/1`): a peer asks for up to N of the peers its counterpart has
 * seen pass the chain check, each with its dialable listen addresses. The wire format is small,
 * fixed-bound binary; what arrives is only a list of candidates to dial, each of which must still
 * pass the hybrid handshake (bound to the genesis hash) and the layer's chain check before it is
 * trusted, kept in the address book or shared further.
 */
import { peerIdFromString } from '@libp2p/peer-id';
import { multiaddr, type Multiaddr } from '@multiformats/multiaddr';
import { parseHex, toHex } from '../../core/codec/bytes.js';
import { HASH_BYTES } from '../../core/constants.js';
import { SvcError } from '../../core/errors.js';
import type { ProtocolLimits } from './types.js';

/** Most records in one response (and asked for in one request). */
export const MAX_PEER_RECORDS = 32;
/** Most addresses one record carries. */
export const MAX_ADDRS_PER_RECORD = 4;
/** Longest binary multiaddr accepted (an ip6 + tcp one is 21 bytes; a dns name up to ~60). */
export const MAX_ADDR_BYTES = 64;
/** Longest peer id accepted, in its textual (base58) form: an Ed25519 one is 52 characters. */
export const MAX_PEER_ID_BYTES = 64;
/** A request is one byte: how many records the asker wants (1..MAX_PEER_RECORDS). */
export const PEX_REQUEST_BYTES = 1;
/** Peer ids travel as their text; invalid UTF-8 is malformed. */
const ID_TEXT = new TextDecoder('utf-8', { fatal: true });
/** genesis(32) ‖ count(1) ‖ count × (id_len(1) ‖ id ‖ n_addrs(1) ‖ n × (len(1) ‖ addr)). */
export const MAX_PEX_RESPONSE_BYTES = HASH_BYTES + 1 + MAX_PEER_RECORDS * (1 + MAX_PEER_ID_BYTES + 1 + MAX_ADDRS_PER_RECORD * (1 + MAX_ADDR_BYTES));

/** Limits of the protocol: one small request, one bounded response chunk. */
export function peerExchangeLimits(slotMs: number): ProtocolLimits {
  return { maxRequestBytes: PEX_REQUEST_BYTES, maxResponseChunks: 1, maxChunkBytes: MAX_PEX_RESPONSE_BYTES, timeoutMs: Math.max(5_000, 2 * slotMs) };
}

/** One shared peer: its id and dialable listen addresses (multiaddrs without `/p2p/`). */
export interface PeerRecord {
  peerId: string;
  addrs: string[];
}

/** Why a peer-exchange message was refused; the `reason` label of the rejection metric. */
export type PexFault = 'malformed' | 'other_chain';

/** A peer-exchange request or response that breaks the format, or one for another chain. */
export class PeerExchangeError extends SvcError {
  constructor(
    readonly fault: PexFault,
    message: string,
  ) {
    super(fault === 'other_chain' ? 'P2P_PEX_OTHER_CHAIN' : 'P2P_PEX_MALFORMED', message);
  }
}

/** Encodes a request for up to `count` records. */
export function encodePexRequest(count: number): Uint8Array {
  return Uint8Array.of(Math.max(1, Math.min(MAX_PEER_RECORDS, count)));
}

/** Decodes a request: exactly one byte, 1..MAX_PEER_RECORDS. */
export function decodePexRequest(bytes: Uint8Array): number {
  if (bytes.length !== PEX_REQUEST_BYTES) throw new PeerExchangeError('malformed', `peer-exchange request must be ${PEX_REQUEST_BYTES} byte, got ${bytes.length}`);
  const n = bytes[0]!;
  if (n < 1 || n > MAX_PEER_RECORDS) throw new PeerExchangeError('malformed', `peer-exchange request asks for ${n} records (1 to ${MAX_PEER_RECORDS})`);
  return n;
}

/** Encodes a response; records or addresses beyond the bounds are left out, never sent. */
export function encodePexResponse(genesisHash: string, records: readonly PeerRecord[]): Uint8Array {
  const parts: number[] = [];
  const kept: Array<{ id: Uint8Array; addrs: Uint8Array[] }> = [];
  for (const r of records) {
    if (kept.length >= MAX_PEER_RECORDS) break;
    const id = new TextEncoder().encode(peerIdFromString(r.peerId).toString());
    if (id.length > MAX_PEER_ID_BYTES) continue;
    const addrs = r.addrs
      .map((a) => multiaddr(a).bytes)
      .filter((b) => b.length <= MAX_ADDR_BYTES)
      .slice(0, MAX_ADDRS_PER_RECORD);
    if (addrs.length > 0) kept.push({ id, addrs });
  }
  parts.push(kept.length);
  for (const k of kept) {
    parts.push(k.id.length, ...k.id, k.addrs.length);
    for (const a of k.addrs) parts.push(a.length, ...a);
  }
  const out = new Uint8Array(HASH_BYTES + parts.length);
  out.set(parseHex(genesisHash, 'genesis hash', HASH_BYTES), 0);
  out.set(parts, HASH_BYTES);
  return out;
}

/** A decoded response: the records, with every address parsed but not yet judged dialable. */
export interface PexResponse {
  records: Array<{ peerId: string; addrs: Multiaddr[] }>;
}

/**
 * Decodes a response for our chain: anything that breaks the format (truncated, trailing bytes,
 * counts past the bounds, a bad peer id or multiaddr, a repeated peer) is `malformed`, and a
 * response naming another genesis is `other_chain`; either refuses the whole response.
 */
export function decodePexResponse(bytes: Uint8Array, ourGenesisHash: string): PexResponse {
  if (bytes.length > MAX_PEX_RESPONSE_BYTES) throw new PeerExchangeError('malformed', `peer-exchange response of ${bytes.length} bytes exceeds ${MAX_PEX_RESPONSE_BYTES}`);
  if (bytes.length < HASH_BYTES + 1) throw new PeerExchangeError('malformed', 'peer-exchange response truncated before its record count');
  const genesis = toHex(bytes.subarray(0, HASH_BYTES));
  if (genesis !== ourGenesisHash.toLowerCase()) throw new PeerExchangeError('other_chain', `peer-exchange response is for genesis ${genesis}, not ${ourGenesisHash}`);
  let o = HASH_BYTES;
  const take = (n: number, what: string): Uint8Array => {
    if (o + n > bytes.length) throw new PeerExchangeError('malformed', `peer-exchange response truncated in ${what}`);
    const s = bytes.subarray(o, o + n);
    o += n;
    return s;
  };
  const count = take(1, 'record count')[0]!;
  if (count > MAX_PEER_RECORDS) throw new PeerExchangeError('malformed', `peer-exchange response has ${count} records (at most ${MAX_PEER_RECORDS})`);
  const records: PexResponse['records'] = [];
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const idLen = take(1, 'peer id length')[0]!;
    if (idLen === 0 || idLen > MAX_PEER_ID_BYTES) throw new PeerExchangeError('malformed', `record ${i}: peer id of ${idLen} bytes`);
    const idBytes = take(idLen, 'peer id');
    let peerId: string;
    try {
      peerId = peerIdFromString(ID_TEXT.decode(idBytes)).toString();
    } catch (err) {
      throw new PeerExchangeError('malformed', `record ${i}: not a peer id (${(err as Error).message})`);
    }
    if (seen.has(peerId)) throw new PeerExchangeError('malformed', `record ${i}: peer ${peerId} listed twice`);
    seen.add(peerId);
    const n = take(1, 'address count')[0]!;
    if (n === 0 || n > MAX_ADDRS_PER_RECORD) throw new PeerExchangeError('malformed', `record ${i}: ${n} addresses (1 to ${MAX_ADDRS_PER_RECORD})`);
    const addrs: Multiaddr[] = [];
    for (let j = 0; j < n; j++) {
      const len = take(1, 'address length')[0]!;
      if (len === 0 || len > MAX_ADDR_BYTES) throw new PeerExchangeError('malformed', `record ${i}: address of ${len} bytes`);
      const raw = take(len, 'address');
      try {
        addrs.push(multiaddr(raw.slice()));
      } catch (err) {
        throw new PeerExchangeError('malformed', `record ${i}: address ${j} is not a multiaddr (${(err as Error).message})`);
      }
    }
    records.push({ peerId, addrs });
  }
  if (o !== bytes.length) throw new PeerExchangeError('malformed', `${bytes.length - o} bytes after the last record`);
  return { records };
}

/**
 * The address in dialable form (`/ip4|ip6|dns…/host/tcp/port`, any `/p2p/` suffix dropped), or
 * undefined when we could not dial it: another transport, port 0, an unspecified, multicast or
 * broadcast IP, a `/p2p/` naming a different peer, or loopback learned over a non-loopback
 * connection (it would point at ourselves).
 */
export function dialableAddr(addr: Multiaddr, peerId: string, allowLoopback: boolean): string | undefined {
  const c = addr.getComponents();
  if (c.length < 2 || c.length > 3) return undefined;
  const [host, tcp, p2p] = c as [(typeof c)[0], (typeof c)[0], (typeof c)[0] | undefined];
  if (!['ip4', 'ip6', 'dns', 'dns4', 'dns6'].includes(host.name) || !host.value) return undefined;
  if (tcp.name !== 'tcp' || !tcp.value) return undefined;
  const port = Number(tcp.value);
  if (!Number.isInteger(port) || port < 1 || port > 65535) return undefined;
  if (p2p && (p2p.name !== 'p2p' || p2p.value !== peerId)) return undefined;
  if (host.name === 'ip4') {
    const [a] = host.value.split('.').map(Number) as [number];
    if (host.value === '0.0.0.0' || host.value === '255.255.255.255' || (a >= 224 && a <= 239)) return undefined;
    if (a === 127 && !allowLoopback) return undefined;
  } else if (host.name === 'ip6') {
    const v = host.value.toLowerCase();
    if (v === '::' || v.startsWith('ff')) return undefined;
    if (v === '::1' && !allowLoopback) return undefined;
  } else if (host.value.length > 253 || (/^localhost\.?$/i.test(host.value) && !allowLoopback)) return undefined;
  return `/${host.name}/${host.value}/tcp/${port}`;
}

/** Whether a connection's remote address is loopback (then loopback addresses it names are ours to dial too). */
export function isLoopback(addr: Multiaddr): boolean {
  const host = addr.getComponents()[0];
  return (host?.name === 'ip4' && host.value?.startsWith('127.') === true) || (host?.name === 'ip6' && host.value === '::1');
}
