// Cuts ffmpeg's fragmented MP4 into chunks that end where a fragment ends (after an `mdat`),
// reading only the top-level box headers. Any byte-wise cut would join back into the same
// file, but a part whose job died keeps only the chunks it sent: ending each on a whole
// fragment keeps that part a playable file up to its last chunk.

/** A box header: 32-bit size and type, or size 1 and a 64-bit size after the type. */
const HEADER_BYTES = 8;
const LARGE_HEADER_BYTES = 16;

export class FragmentCutter {
  readonly #maxChunkBytes: number;
  /** Bytes received and not yet in a chunk: whole boxes first (`#boxedBytes` of them), then a box still arriving. */
  #pending: Uint8Array[] = [];
  #pendingBytes = 0;
  #boxedBytes = 0;
  /** Where the box still arriving ends, counted from the start of `#pending`; 0 when its header is not read yet. */
  #boxEnd = 0;
  #boxType = '';

  constructor(maxChunkBytes: number) {
    this.#maxChunkBytes = maxChunkBytes;
  }

  /** Takes ffmpeg's next output; returns the chunks it completed (usually none, or one per fragment). */
  push(data: Uint8Array): Uint8Array[] {
    this.#pending.push(data);
    this.#pendingBytes += data.length;
    const chunks: Uint8Array[] = [];
    for (;;) {
      if (this.#boxEnd === 0) {
        const header = this.#header(this.#boxedBytes);
        if (header === null) break;
        this.#boxEnd = this.#boxedBytes + header.size;
        this.#boxType = header.type;
      }
      if (this.#pendingBytes < this.#boxEnd) {
        // A box larger than a chunk (never at the avatar's bitrate) goes out in pieces: joined, they are the same bytes.
        while (this.#pendingBytes >= this.#maxChunkBytes) chunks.push(this.#cut(this.#maxChunkBytes));
        break;
      }
      this.#boxedBytes = this.#boxEnd;
      this.#boxEnd = 0;
      if (this.#boxType === 'mdat' || this.#boxedBytes >= this.#maxChunkBytes) {
        while (this.#boxedBytes > this.#maxChunkBytes) chunks.push(this.#cut(this.#maxChunkBytes));
        chunks.push(this.#cut(this.#boxedBytes));
      }
    }
    return chunks;
  }

  /**
   * The whole boxes not yet sent, once ffmpeg has finished (its trailer, or the fragment it
   * was writing when it died): a box cut off mid-way is dropped, so the part stays a file.
   */
  flush(): { chunks: Uint8Array[]; droppedBytes: number } {
    const chunks: Uint8Array[] = [];
    while (this.#boxedBytes > this.#maxChunkBytes) chunks.push(this.#cut(this.#maxChunkBytes));
    if (this.#boxedBytes > 0) chunks.push(this.#cut(this.#boxedBytes));
    const droppedBytes = this.#pendingBytes;
    this.#pending = [];
    this.#pendingBytes = 0;
    this.#boxEnd = 0;
    return { chunks, droppedBytes };
  }

  /** The header of the box starting `at` bytes into `#pending`, or null while its bytes are still coming. */
  #header(at: number): { size: number; type: string } | null {
    if (this.#pendingBytes - at < HEADER_BYTES) return null;
    const head = this.#peek(at, Math.min(LARGE_HEADER_BYTES, this.#pendingBytes - at));
    const view = new DataView(head.buffer, head.byteOffset, head.byteLength);
    const type = String.fromCharCode(head[4]!, head[5]!, head[6]!, head[7]!);
    const size32 = view.getUint32(0);
    if (size32 === 1) {
      if (head.length < LARGE_HEADER_BYTES) return null;
      return { size: Number(view.getBigUint64(8)), type };
    }
    // Size 0 ("to the end of the file") never comes from a fragmenting muxer; treated as the rest, sent at flush.
    return { size: size32 === 0 ? Number.MAX_SAFE_INTEGER : size32, type };
  }

  /** `length` bytes from `at` into `#pending`, copied out. */
  #peek(at: number, length: number): Uint8Array {
    const out = new Uint8Array(length);
    let skipped = 0;
    let filled = 0;
    for (const piece of this.#pending) {
      if (filled === length) break;
      if (skipped + piece.length <= at) {
        skipped += piece.length;
        continue;
      }
      const from = Math.max(0, at - skipped);
      const n = Math.min(piece.length - from, length - filled);
      out.set(piece.subarray(from, from + n), filled);
      filled += n;
      skipped += piece.length;
    }
    return out;
  }

  /** Removes the first `length` bytes of `#pending` as one chunk. */
  #cut(length: number): Uint8Array {
    const chunk = this.#peek(0, length);
    let left = length;
    while (left > 0) {
      const piece = this.#pending[0]!;
      if (piece.length <= left) {
        this.#pending.shift();
        left -= piece.length;
      } else {
        this.#pending[0] = piece.subarray(left);
        left = 0;
      }
    }
    this.#pendingBytes -= length;
    this.#boxedBytes -= Math.min(length, this.#boxedBytes);
    if (this.#boxEnd > 0) this.#boxEnd -= length;
    return chunk;
  }
}
