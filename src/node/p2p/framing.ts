/**
 * Request/response framing: each frame is an unsigned LEB128 varint length, then that many bytes.
 * A request stream carries one frame then the requester closes its write side; a response is zero or
 * more frames (chunks) then the responder closes. Limits are checked on the length prefix, before
 * the body is buffered, so an oversized frame costs nothing to refuse.
 */
import type { Stream } from '@libp2p/interface';
import { SvcError } from '../../core/errors.js';

/** A varint longer than this cannot describe a frame we would accept (2^35 > any limit). */
const MAX_VARINT_BYTES = 5;

/** Why a frame was refused; also the `reason` label of `service_p2p_messages_rejected_total`. */
export type FrameFault = 'oversize' | 'truncated' | 'malformed_length' | 'too_many_chunks' | 'trailing_bytes' | 'timeout' | 'reset';

/** A peer broke the framing or a limit. */
export class FrameError extends SvcError {
  constructor(
    readonly fault: FrameFault,
    message: string,
  ) {
    super('P2P_BAD_FRAME', message, 400);
  }
}

/** Encodes a frame: varint length then the bytes. */
export function encodeFrame(body: Uint8Array): Uint8Array {
  const prefix: number[] = [];
  let n = body.length;
  do {
    let byte = n & 0x7f;
    n = Math.floor(n / 128);
    if (n > 0) byte |= 0x80;
    prefix.push(byte);
  } while (n > 0);
  const out = new Uint8Array(prefix.length + body.length);
  out.set(prefix, 0);
  out.set(body, prefix.length);
  return out;
}

/** Pulls frames out of a stream's byte chunks. */
export class FrameReader {
  private readonly source: AsyncIterator<Uint8Array | { subarray(): Uint8Array }>;
  private buf: Uint8Array = new Uint8Array(0);
  private ended = false;

  constructor(stream: Stream) {
    this.source = stream[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = next.value instanceof Uint8Array ? next.value : next.value.subarray();
    if (this.buf.length === 0) this.buf = chunk;
    else {
      const joined = new Uint8Array(this.buf.length + chunk.length);
      joined.set(this.buf, 0);
      joined.set(chunk, this.buf.length);
      this.buf = joined;
    }
    return true;
  }

  /** The next frame, or null at a clean end of stream (between frames). */
  async next(maxBytes: number): Promise<Uint8Array | null> {
    let length = 0;
    let multiplier = 1;
    let i = 0;
    for (;;) {
      while (i >= this.buf.length) {
        if (!(await this.fill())) {
          if (i === 0 && this.buf.length === 0) return null;
          throw new FrameError('truncated', 'stream ended inside a frame length');
        }
      }
      const byte = this.buf[i]!;
      length += (byte & 0x7f) * multiplier;
      multiplier *= 128;
      i++;
      if ((byte & 0x80) === 0) break;
      if (i >= MAX_VARINT_BYTES) throw new FrameError('malformed_length', 'frame length varint too long');
    }
    if (i > 1 && this.buf[i - 1] === 0) throw new FrameError('malformed_length', 'frame length varint not minimal');
    if (length > maxBytes) throw new FrameError('oversize', `frame of ${length} bytes exceeds the limit of ${maxBytes}`);
    while (this.buf.length < i + length) {
      if (!(await this.fill())) throw new FrameError('truncated', `stream ended after ${this.buf.length - i} of ${length} frame bytes`);
    }
    const frame = this.buf.slice(i, i + length);
    this.buf = this.buf.subarray(i + length);
    return frame;
  }

  /** True if the stream ends here with no further bytes. */
  async atEnd(): Promise<boolean> {
    while (this.buf.length === 0) {
      if (!(await this.fill())) return true;
    }
    return false;
  }
}

/** Writes a frame, honouring the stream's back-pressure. */
export async function writeFrame(stream: Stream, body: Uint8Array, signal: AbortSignal): Promise<void> {
  if (!stream.send(encodeFrame(body))) await stream.onDrain({ signal });
}
