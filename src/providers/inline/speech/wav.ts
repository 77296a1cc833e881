// WAV as the speech endpoint writes and reads it: 16-bit little-endian mono PCM in a
// RIFF file with the canonical 44-byte header.

export const OUTPUT_RATE = 24_000;

/** Sizes a streaming writer cannot know yet (the audio's length): RIFF's "to the end of the stream". */
export const UNKNOWN_SIZE = 0xffffffff;

/** The 44-byte header of 16-bit mono PCM at `rate`; `dataBytes` UNKNOWN_SIZE when the length is not known yet. */
export function wavHeader(dataBytes: number, rate = OUTPUT_RATE): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(dataBytes === UNKNOWN_SIZE ? UNKNOWN_SIZE : 36 + dataBytes, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16); // fmt chunk size
  h.writeUInt16LE(1, 20); // PCM
  h.writeUInt16LE(1, 22); // mono
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2, 28); // bytes per second
  h.writeUInt16LE(2, 32); // block align
  h.writeUInt16LE(16, 34); // bits per sample
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(dataBytes, 40);
  return h;
}

export interface PcmAudio {
  rate: number;
  samples: Int16Array;
}

/** The samples of a 16-bit mono RIFF WAVE file (its chunks walked; a size to the end of the stream read as such). */
export function readWav(bytes: Uint8Array): PcmAudio {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length < 12 || b.toString('ascii', 0, 4) !== 'RIFF' || b.toString('ascii', 8, 12) !== 'WAVE') throw new Error('not a RIFF WAVE file');
  let rate = 0;
  for (let at = 12; at + 8 <= b.length; ) {
    const id = b.toString('ascii', at, at + 4);
    const size = b.readUInt32LE(at + 4);
    const body = at + 8;
    if (id === 'fmt ') {
      if (b.readUInt16LE(body) !== 1 || b.readUInt16LE(body + 2) !== 1 || b.readUInt16LE(body + 14) !== 16) throw new Error('not 16-bit mono PCM');
      rate = b.readUInt32LE(body + 4);
    } else if (id === 'data') {
      if (rate === 0) throw new Error('a data chunk before its format');
      const end = size === UNKNOWN_SIZE ? b.length : Math.min(b.length, body + size);
      const count = Math.floor((end - body) / 2);
      const samples = new Int16Array(count);
      for (let i = 0; i < count; i++) samples[i] = b.readInt16LE(body + 2 * i);
      return { rate, samples };
    }
    at = body + size + (size & 1);
  }
  throw new Error('no data chunk');
}
