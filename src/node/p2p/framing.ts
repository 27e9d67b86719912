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
    super('P2P_BAD_FRAME', message);
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

/** Pulls frames out of a stream's byte chunks (chunks are kept as they come and copied once, into their frame). */
export class FrameReader {
  private readonly source: AsyncIterator<Uint8Array | { subarray(): Uint8Array }>;
  private readonly chunks: Uint8Array[] = [];
  private buffered = 0;
  private ended = false;

  constructor(source: AsyncIterable<Uint8Array | { subarray(): Uint8Array }>) {
    this.source = source[Symbol.asyncIterator]();
  }

  private async fill(): Promise<boolean> {
    if (this.ended) return false;
    const next = await this.source.next();
    if (next.done) {
      this.ended = true;
      return false;
    }
    const chunk = next.value instanceof Uint8Array ? next.value : next.value.subarray();
    if (chunk.length > 0) {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
    }
    return true;
  }

  /** The byte at `index` of what is buffered (index < buffered). */
  private byteAt(index: number): number {
    for (const c of this.chunks) {
      if (index < c.length) return c[index]!;
      index -= c.length;
    }
    throw new RangeError('byteAt past the buffer');
  }

  /** Removes and returns the first `n` buffered bytes (n <= buffered). */
  private take(n: number): Uint8Array {
    const out = new Uint8Array(n);
    let o = 0;
    while (o < n) {
      const c = this.chunks[0]!;
      const k = Math.min(c.length, n - o);
      out.set(c.subarray(0, k), o);
      o += k;
      if (k === c.length) this.chunks.shift();
      else this.chunks[0] = c.subarray(k);
    }
    this.buffered -= n;
    return out;
  }

  /** The next frame, or null at a clean end of stream (between frames). */
  async next(maxBytes: number): Promise<Uint8Array | null> {
    let length = 0;
    let multiplier = 1;
    let i = 0;
    let last = 0;
    for (;;) {
      while (i >= this.buffered) {
        if (!(await this.fill())) {
          if (i === 0) return null;
          throw new FrameError('truncated', 'stream ended inside a frame length');
        }
      }
      last = this.byteAt(i);
      length += (last & 0x7f) * multiplier;
      multiplier *= 128;
      i++;
      if ((last & 0x80) === 0) break;
      if (i >= MAX_VARINT_BYTES) throw new FrameError('malformed_length', 'frame length varint too long');
    }
    if (i > 1 && last === 0) throw new FrameError('malformed_length', 'frame length varint not minimal');
    if (length > maxBytes) throw new FrameError('oversize', `frame of ${length} bytes exceeds the limit of ${maxBytes}`);
    while (this.buffered < i + length) {
      if (!(await this.fill())) throw new FrameError('truncated', `stream ended after ${this.buffered - i} of ${length} frame bytes`);
    }
    this.take(i);
    return this.take(length);
  }

  /** True if the stream ends here with no further bytes. */
  async atEnd(): Promise<boolean> {
    while (this.buffered === 0) {
      if (!(await this.fill())) return true;
    }
    return false;
  }
}

/** Writes a frame, honouring the stream's back-pressure. */
export async function writeFrame(stream: Stream, body: Uint8Array, signal: AbortSignal): Promise<void> {
  if (!stream.send(encodeFrame(body))) await stream.onDrain({ signal });
}
