/**
 * Short-lived byte buffers carved from shared chunks. V8 gives every typed array over 64 bytes a
 * backing store of its own outside the heap, which each young-generation collection must track,
 * and which it frees one by one. A state commit at a million accounts builds about 3,900 internal
 * nodes a block, nearly all of them copied elsewhere within the block (into the held upper levels,
 * into LevelDB's batch): carved from a few chunks, they cost the collector a few backing stores
 * instead of thousands. A chunk is never reused: it is freed once no view of it is left, so a
 * holder that keeps one view for long must keep a copy instead (see `detached`).
 */
export class ByteArena {
  private chunk: Uint8Array;
  private at = 0;

  constructor(readonly chunkBytes: number) {
    this.chunk = new Uint8Array(chunkBytes);
  }

  /** `n` zeroed bytes: a view of the current chunk, or a buffer of their own when `n` would take more than a quarter of a chunk. */
  alloc(n: number): Uint8Array {
    if (n > this.chunkBytes / 4) return new Uint8Array(n);
    if (this.at + n > this.chunkBytes) {
      this.chunk = new Uint8Array(this.chunkBytes);
      this.at = 0;
    }
    const out = this.chunk.subarray(this.at, this.at + n);
    this.at += n;
    return out;
  }
}

/** `bytes` itself when it spans its whole buffer, else a copy: what a long-lived holder keeps of a view. */
export function detached(bytes: Uint8Array): Uint8Array {
  return bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? bytes : bytes.slice();
}
