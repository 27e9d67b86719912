/**
 * Request/response over libp2p streams: one request frame, then response chunks, each side enforcing
 * the protocol's limits. A peer that breaks them has its stream reset, the fault counted by reason
 * and the peer penalised; nothing a peer sends can throw out of here into the node.
 */
import type { Stream } from '@libp2p/interface';
import { SvcError } from '../../core/errors.js';
import { P2pError } from './errors.js';
import { httpStatusOf } from '../../api/errors.js';
import type { Logger } from '../../util/log.js';
import { FrameError, FrameReader, writeFrame, type FrameFault } from './framing.js';
import type { P2pMetrics } from './metrics.js';
import type { ProtocolLimits, RequestHandler } from './types.js';

/** Concurrent inbound streams per connection and protocol (libp2p refuses more). */
export const MAX_INBOUND_STREAMS_PER_PEER = 8;
/** Concurrent outbound streams per connection and protocol. */
export const MAX_OUTBOUND_STREAMS_PER_PEER = 8;

/** A request that failed: the peer broke a limit, reset the stream, timed out or refused the request. */
export class RequestError extends SvcError {
  constructor(
    readonly fault: FrameFault | 'dial' | 'refused',
    message: string,
    options?: { cause?: unknown },
  ) {
    super('P2P_REQUEST_FAILED', message, options);
  }
}

/** What request/response needs from the host. */
export interface ReqRespContext {
  metrics: P2pMetrics;
  log: Logger;
  penalise(peer: string, reason: string): void;
}

/** Aborts `stream` when the exchange's deadline passes; returns the signal and a disposer. */
function deadline(stream: Stream, timeoutMs: number): { signal: AbortSignal; expired: () => boolean; done: () => void } {
  const controller = new AbortController();
  let expired = false;
  const timer = setTimeout(() => {
    expired = true;
    controller.abort(new FrameError('timeout', `exchange exceeded ${timeoutMs} ms`));
    stream.abort(new FrameError('timeout', `exchange exceeded ${timeoutMs} ms`));
  }, timeoutMs);
  timer.unref?.();
  return { signal: controller.signal, expired: () => expired, done: () => clearTimeout(timer) };
}

/** Classifies an error thrown while reading from a stream the peer (or a deadline) broke. */
function faultOf(err: unknown, expired: boolean): FrameFault {
  if (expired) return 'timeout';
  if (err instanceof FrameError) return err.fault;
  return 'reset';
}

/** Serves one inbound stream of `protocol`. Never throws. */
export async function serveStream(ctx: ReqRespContext, protocol: string, stream: Stream, peer: string, handler: RequestHandler, limits: ProtocolLimits): Promise<void> {
  const { metrics, log } = ctx;
  const clock = deadline(stream, limits.timeoutMs);
  const reader = new FrameReader(stream);
  let request: Uint8Array | null;
  try {
    request = await reader.next(limits.maxRequestBytes);
    if (request === null) throw new FrameError('truncated', 'stream closed without a request');
    if (!(await reader.atEnd())) throw new FrameError('trailing_bytes', 'bytes after the request frame');
  } catch (err) {
    clock.done();
    const fault = faultOf(err, clock.expired());
    metrics.messageRejected(protocol, fault);
    metrics.request(protocol, 'inbound', fault);
    // A remote reset is how a requester cancels, and a request that never completes is what a
    // network cut does to an honest one: only protocol violations cost the peer.
    if (fault !== 'reset' && fault !== 'timeout') ctx.penalise(peer, `req_${fault}`);
    stream.abort(err instanceof Error ? err : new Error(String(err)));
    return;
  }
  let chunks = 0;
  try {
    for await (const chunk of handler(request, peer)) {
      if (chunks >= limits.maxResponseChunks || chunk.length > limits.maxChunkBytes) {
        // Our own handler overran the limits the requester enforces: stop at the limit rather than
        // send what the peer must refuse.
        log.warn('p2p handler exceeded its response limits', { protocol, chunks, chunkBytes: chunk.length });
        break;
      }
      await writeFrame(stream, chunk, clock.signal);
      chunks++;
    }
    await stream.close({ signal: clock.signal });
    metrics.request(protocol, 'inbound', 'ok');
  } catch (err) {
    if (err instanceof SvcError && httpStatusOf(err) === 429) {
      // A peer over the layer's rate limit: refused (the requester sees a reset), not penalised.
      metrics.request(protocol, 'inbound', 'rate_limited');
    } else if (err instanceof SvcError && httpStatusOf(err) === 400 && !(err instanceof FrameError)) {
      metrics.messageRejected(protocol, 'bad_request');
      metrics.request(protocol, 'inbound', 'bad_request');
      ctx.penalise(peer, 'req_bad_request');
    } else if (clock.expired()) {
      metrics.request(protocol, 'inbound', 'timeout');
    } else if (stream.status === 'open') {
      log.error('p2p request handler failed', { protocol, peer, error: (err as Error).message });
      metrics.request(protocol, 'inbound', 'handler_error');
    } else {
      metrics.request(protocol, 'inbound', 'reset');
    }
    stream.abort(err instanceof Error ? err : new Error(String(err)));
  } finally {
    clock.done();
  }
}

/**
 * The answer of a single-answer protocol: its one chunk, or null when the stream ended with none.
 * An empty answer is what a peer shutting down or cut off mid-request sends too, so callers ignore
 * it like a timeout; several chunks are provable misbehaviour and throw.
 */
export function singleAnswer(chunks: readonly Uint8Array[]): Uint8Array | null {
  if (chunks.length > 1) throw new FrameError('too_many_chunks', `expected one response chunk, got ${chunks.length}`);
  return chunks[0] ?? null;
}

/** Runs one request on an opened stream and collects the response chunks within `limits`. */
export async function exchange(ctx: ReqRespContext, protocol: string, stream: Stream, peer: string, request: Uint8Array, limits: ProtocolLimits): Promise<Uint8Array[]> {
  const { metrics } = ctx;
  if (request.length > limits.maxRequestBytes) {
    stream.abort(new Error('request too large'));
    throw new P2pError('P2P_REQUEST_TOO_LARGE', `request of ${request.length} bytes exceeds the protocol limit of ${limits.maxRequestBytes}`);
  }
  const clock = deadline(stream, limits.timeoutMs);
  const chunks: Uint8Array[] = [];
  try {
    await writeFrame(stream, request, clock.signal);
    await stream.close({ signal: clock.signal });
    const reader = new FrameReader(stream);
    for (;;) {
      const chunk = await reader.next(limits.maxChunkBytes);
      if (chunk === null) break;
      if (chunks.length >= limits.maxResponseChunks) throw new FrameError('too_many_chunks', `more than ${limits.maxResponseChunks} response chunks`);
      chunks.push(chunk);
    }
    // A reset (the responder refused, or the stream broke) ends the iteration with an error, not
    // silently: a response cut short must not look complete.
    if (stream.status === 'reset' || stream.status === 'aborted') throw new FrameError('reset', 'responder reset the stream');
    metrics.request(protocol, 'outbound', 'ok');
    return chunks;
  } catch (err) {
    const fault = faultOf(err, clock.expired());
    metrics.request(protocol, 'outbound', fault);
    if (fault !== 'reset' && fault !== 'timeout') {
      metrics.messageRejected(protocol, fault);
      ctx.penalise(peer, `resp_${fault}`);
    }
    stream.abort(err instanceof Error ? err : new Error(String(err)));
    throw new RequestError(fault, `${protocol} request to ${peer} failed: ${fault}${err instanceof Error ? ` (${err.message})` : ''}`, { cause: err });
  } finally {
    clock.done();
  }
}
