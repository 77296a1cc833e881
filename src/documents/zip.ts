// Just enough ZIP to hand mammoth a .docx that cannot explode. mammoth opens the zip
// with jszip, which inflates an entry whole before it checks the size the archive
// declared; a zip bomb would be in memory by then. So we read the central directory
// ourselves, keep only the XML parts (the text is there; images and fonts are not),
// refuse an archive whose parts declare more than a budget, inflate each part with
// zlib's maxOutputLength at the size it declared (an entry that lies stops there), check
// its CRC, and write the parts again uncompressed ("stored") for mammoth to open.
import zlib from 'node:zlib';

export class ZipError extends Error {
  constructor(
    message: string,
    /** True when the archive is well formed but over a limit. */
    readonly overLimit = false,
  ) {
    super(message);
    this.name = 'ZipError';
  }
}

export interface ZipEntry {
  name: string;
  rawName: Uint8Array;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  size: number;
  localOffset: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const ZIP64_EOCD_LOCATOR = 0x07064b50;

/** The central directory's entries (at most `maxEntries`); throws ZipError when it is missing or damaged. */
export function listEntries(bytes: Uint8Array, maxEntries: number): ZipEntry[] {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // The end record is the last 22 bytes, before a comment of at most 65,535 bytes.
  let eocd = -1;
  for (let i = bytes.length - 22; i >= Math.max(0, bytes.length - 22 - 0xffff); i--) {
    if (view.getUint32(i, true) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new ZipError('it is not a ZIP archive (no end of central directory)');
  if (eocd >= 20 && view.getUint32(eocd - 20, true) === ZIP64_EOCD_LOCATOR) throw new ZipError('it is a ZIP64 archive, which is not read');
  const count = view.getUint16(eocd + 10, true);
  const cdSize = view.getUint32(eocd + 12, true);
  const cdOffset = view.getUint32(eocd + 16, true);
  if (count > maxEntries) throw new ZipError(`its archive lists ${count} entries; at most ${maxEntries} are read`, true);
  if (cdOffset + cdSize > eocd) throw new ZipError('its central directory lies outside the archive (truncated?)');

  const entries: ZipEntry[] = [];
  const names = new Set<string>();
  let p = cdOffset;
  for (let n = 0; n < count; n++) {
    if (p + 46 > cdOffset + cdSize || view.getUint32(p, true) !== CENTRAL) throw new ZipError('its central directory is damaged');
    const nameLength = view.getUint16(p + 28, true);
    const extraLength = view.getUint16(p + 30, true);
    const commentLength = view.getUint16(p + 32, true);
    if (p + 46 + nameLength > cdOffset + cdSize) throw new ZipError('its central directory is damaged');
    const rawName = bytes.subarray(p + 46, p + 46 + nameLength);
    const entry: ZipEntry = {
      name: Buffer.from(rawName).toString('utf8'),
      rawName,
      flags: view.getUint16(p + 8, true),
      method: view.getUint16(p + 10, true),
      crc: view.getUint32(p + 16, true),
      compressedSize: view.getUint32(p + 20, true),
      size: view.getUint32(p + 24, true),
      localOffset: view.getUint32(p + 42, true),
    };
    // Two entries of one name could show one reader one part and another reader another.
    if (names.has(entry.name)) throw new ZipError(`its archive holds '${entry.name.slice(0, 100)}' twice`);
    names.add(entry.name);
    entries.push(entry);
    p += 46 + nameLength + extraLength + commentLength;
  }
  return entries;
}

/** An entry's bytes, inflated no further than the size it declares; throws ZipError. */
export function readEntry(bytes: Uint8Array, entry: ZipEntry): Buffer {
  const shown = entry.name.slice(0, 100);
  if (entry.flags & 1) throw new ZipError(`'${shown}' is encrypted`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const at = entry.localOffset;
  if (at + 30 > bytes.length || view.getUint32(at, true) !== LOCAL) throw new ZipError(`the local header of '${shown}' is missing (truncated?)`);
  const start = at + 30 + view.getUint16(at + 26, true) + view.getUint16(at + 28, true);
  const end = start + entry.compressedSize;
  if (end > bytes.length) throw new ZipError(`'${shown}' is cut short (truncated archive)`);
  const stored = bytes.subarray(start, end);
  let data: Buffer;
  if (entry.method === 0) {
    data = Buffer.from(stored);
  } else if (entry.method === 8) {
    try {
      // One byte of room past the declared size: an entry that fills it lied.
      data = zlib.inflateRawSync(stored, { maxOutputLength: entry.size + 1 });
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw new ZipError(`'${shown}' inflates beyond the size it declares`);
      throw new ZipError(`'${shown}' could not be inflated: ${(err as Error).message}`);
    }
  } else {
    throw new ZipError(`'${shown}' uses compression method ${entry.method}; only stored and deflated entries are read`);
  }
  if (data.length !== entry.size) throw new ZipError(`'${shown}' holds ${data.length} bytes where its header says ${entry.size}`);
  if (zlib.crc32(data) !== entry.crc) throw new ZipError(`'${shown}' fails its CRC check (corrupt archive)`);
  return data;
}

/** A ZIP of these parts, stored uncompressed (so opening it inflates nothing). */
export function storedZip(parts: readonly { entry: ZipEntry; data: Uint8Array }[]): Buffer {
  const locals: Buffer[] = [];
  const centrals: Buffer[] = [];
  let offset = 0;
  for (const { entry, data } of parts) {
    const utf8Flag = 0x0800;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(LOCAL, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(utf8Flag, 6);
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt32LE(entry.crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(entry.rawName.length, 26);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(CENTRAL, 0);
    central.writeUInt16LE(20, 4); // version made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(utf8Flag, 8);
    central.writeUInt32LE(entry.crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(entry.rawName.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, Buffer.from(entry.rawName), Buffer.from(data.buffer, data.byteOffset, data.byteLength));
    centrals.push(central, Buffer.from(entry.rawName));
    offset += 30 + entry.rawName.length + data.length;
  }
  const cdSize = centrals.reduce((n, b) => n + b.length, 0);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(EOCD, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(cdSize, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, ...centrals, end]);
}
