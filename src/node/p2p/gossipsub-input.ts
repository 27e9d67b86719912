/**
 * Attribution of undecodable gossipsub input to its sender. Kept apart from the host because it
 * reaches into gossipsub's private read loop, which a gossipsub upgrade may change.
 */
import type { GossipSub } from '@libp2p/gossipsub';
import type { PeerId } from '@libp2p/interface';

/** What gossipsub's private read loop looks like, for the instrumentation below. */
interface GossipsubInternals {
  pipePeerReadStream?: (peerId: PeerId, source: AsyncIterable<Uint8Array | { subarray(): Uint8Array }>) => Promise<void>;
  decodeRpc?: (bytes: Uint8Array) => unknown;
}

/**
 * Errors of gossipsub's length-prefixed framing (it-length-prefixed) that only the sender's bytes
 * can cause: a length that is no varint, or one past the RPC cap. Anything else that ends a read
 * loop (a reset, an abort, a connection a network cut closed, a stream ending mid-frame) is what
 * an honest peer's stream does when the link fails: no proof of anything.
 */
const FRAMING_ERRORS: ReadonlySet<string> = new Set(['InvalidMessageLengthError', 'InvalidDataLengthError', 'InvalidDataLengthLengthError']);

/** Why input on a peer's gossipsub stream was refused: its sender is penalised. */
export type RpcFault = 'malformed_rpc' | 'rpc_stream';

/**
 * Gossipsub drops an RPC that does not decode (or a stream that breaks its framing) with a log line
 * and no way to learn who sent it. Its per-peer read loop is wrapped so such input is counted and
 * its sender penalised; the RPC is decoded once more for the check (protobuf, microseconds, against
 * the milliseconds of the signature checks that follow). A stream that merely broke is reported to
 * `onBroken`, unpenalised. Skipped if a gossipsub version changes the private methods.
 */
export function instrumentGossipsubInput(pubsub: GossipSub, onFault: (peer: string, reason: RpcFault) => void, onBroken: (peer: string) => void = () => undefined): boolean {
  const internals = pubsub as unknown as GossipsubInternals;
  const pipe = internals.pipePeerReadStream;
  const decodeRpc = internals.decodeRpc;
  if (typeof pipe !== 'function' || typeof decodeRpc !== 'function') return false;
  internals.pipePeerReadStream = (peerId, source) => {
    const peer = peerId.toString();
    const checked = (async function* () {
      try {
        for await (const data of source) {
          const bytes = data instanceof Uint8Array ? data : data.subarray();
          try {
            decodeRpc.call(pubsub, bytes);
          } catch {
            onFault(peer, 'malformed_rpc');
            continue;
          }
          yield bytes;
        }
      } catch (err) {
        if (err instanceof Error && FRAMING_ERRORS.has(err.name)) onFault(peer, 'rpc_stream');
        else onBroken(peer);
        throw err;
      }
    })();
    return pipe.call(pubsub, peerId, checked);
  };
  return true;
}

