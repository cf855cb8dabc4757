/**
 * Just enough ISO base media file format (MP4, M4A, MOV, 3GP) parsing to tell
 * whether a file carries an audio track. file-type only reads the `ftyp` brand,
 * and brands say nothing reliable about tracks: a phone's `isom` file can be
 * voice-only, and an `M4A`-branded file can be a silent video.
 */

interface Box {
  type: string;
  /** Offset of the box payload (after the size/type header). */
  payloadStart: number;
  end: number;
}

function* childBoxes(bytes: Uint8Array, start: number, end: number): Generator<Box> {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = start;
  while (offset + 8 <= end) {
    let size = view.getUint32(offset);
    let headerSize = 8;
    if (size === 1) {
      // 64-bit "largesize" follows the type.
      if (offset + 16 > end) return;
      size = Number(view.getBigUint64(offset + 8));
      headerSize = 16;
    } else if (size === 0) {
      // Box runs to the end of its parent.
      size = end - offset;
    }
    if (size < headerSize) return;
    const type = String.fromCharCode(...bytes.subarray(offset + 4, offset + 8));
    // A box cut short by truncation is still searched, clamped to what is there.
    yield { type, payloadStart: offset + headerSize, end: Math.min(offset + size, end) };
    offset += size;
  }
}

function findChild(bytes: Uint8Array, parent: Box, type: string): Box | undefined {
  for (const box of childBoxes(bytes, parent.payloadStart, parent.end)) {
    if (box.type === type) return box;
  }
  return undefined;
}

/**
 * 'yes' / 'no' when the movie header (`moov`) was found and read; 'unknown'
 * when there is no `moov` at all, which makes the file undecodable anyway.
 */
export function isobmffHasAudioTrack(bytes: Uint8Array): 'yes' | 'no' | 'unknown' {
  let moov: Box | undefined;
  for (const box of childBoxes(bytes, 0, bytes.byteLength)) {
    if (box.type === 'moov') {
      moov = box;
      break;
    }
  }
  if (!moov) return 'unknown';

  for (const trak of childBoxes(bytes, moov.payloadStart, moov.end)) {
    if (trak.type !== 'trak') continue;
    const mdia = findChild(bytes, trak, 'mdia');
    const hdlr = mdia && findChild(bytes, mdia, 'hdlr');
    // hdlr payload: version+flags (4), pre_defined / QuickTime component type (4), handler type (4).
    if (!hdlr || hdlr.payloadStart + 12 > hdlr.end) continue;
    const handler = String.fromCharCode(...bytes.subarray(hdlr.payloadStart + 8, hdlr.payloadStart + 12));
    if (handler === 'soun') return 'yes';
  }
  return 'no';
}
