// A skill sent as one zip. Every entry is checked BEFORE anything is inflated, from the
// zip's own central directory (jszip keeps one entry per cleaned-up name, so it would hide
// a duplicate or a '../' behind a safe-looking name): names, count, declared sizes, entry
// types (a symlink is refused), encryption and methods. Then jszip inflates each file while
// its bytes are counted, and an entry that inflates past its declared size is refused at
// once: a zip bomb lies about its sizes, so no declared size is trusted.
import JSZip from 'jszip';
import { checkPath, MAX_BYTES, MAX_FILES, refuse } from './skill-files.ts';

export interface ZipEntry {
  path: string;
  data: Buffer;
}

interface Listed {
  path: string;
  size: number;
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
/** Folders may be listed besides the files; anything beyond this is not a skill. */
const MAX_ENTRIES = MAX_FILES * 2;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The zip starts with a local header or is an empty zip. */
export const looksLikeZip = (head: Buffer) => head.length >= 4 && head[0] === 0x50 && head[1] === 0x4b && (head[2] === 3 || head[2] === 5);

/** The file entries the central directory lists, checked; folders and macOS metadata dropped. */
export function listZip(data: Buffer): Listed[] {
  let eocd = -1;
  for (let i = data.length - 22; i >= Math.max(0, data.length - 22 - 65_535); i--) {
    if (data.readUInt32LE(i) === EOCD) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw refuse('The upload is not a zip file that can be read (no end of central directory).');
  const total = data.readUInt16LE(eocd + 10);
  const cdSize = data.readUInt32LE(eocd + 12);
  const cdOffset = data.readUInt32LE(eocd + 16);
  if (data.readUInt16LE(eocd + 4) !== 0 || data.readUInt16LE(eocd + 6) !== 0) throw refuse('Multi-part zip files are not accepted.');
  if (total === 0xffff || cdOffset === 0xffffffff) throw refuse('ZIP64 archives are not accepted: a skill is at most 25 MB.');
  if (total > MAX_ENTRIES) throw refuse(`A skill holds at most ${MAX_FILES} files; the zip lists ${total} entries.`);
  if (cdOffset + cdSize > eocd) throw refuse('The zip file is damaged: its central directory lies outside it.');
  const files: Listed[] = [];
  const names = new Set<string>();
  let declared = 0;
  let at = cdOffset;
  for (let n = 0; n < total; n++) {
    if (at + 46 > eocd || data.readUInt32LE(at) !== CENTRAL) throw refuse('The zip file is damaged: a central directory entry cannot be read.');
    const flags = data.readUInt16LE(at + 8);
    const method = data.readUInt16LE(at + 10);
    const compressed = data.readUInt32LE(at + 20);
    const size = data.readUInt32LE(at + 24);
    const nameLen = data.readUInt16LE(at + 28);
    const next = at + 46 + nameLen + data.readUInt16LE(at + 30) + data.readUInt16LE(at + 32);
    const mode = data.readUInt32LE(at + 38) >>> 16;
    if (next > eocd) throw refuse('The zip file is damaged: a central directory entry runs past its end.');
    let name: string;
    try {
      name = utf8.decode(data.subarray(at + 46, at + 46 + nameLen));
    } catch {
      throw refuse('A zip entry name is not valid UTF-8.');
    }
    at = next;
    const type = mode & S_IFMT;
    if (type === S_IFLNK) throw refuse(`The zip entry '${name.slice(0, 200)}' is a symbolic link; a skill holds plain files only.`);
    if (type !== 0 && type !== S_IFREG && type !== S_IFDIR) throw refuse(`The zip entry '${name.slice(0, 200)}' is not a plain file or folder.`);
    const dir = name.endsWith('/') || type === S_IFDIR;
    checkPath(dir ? name.replace(/\/$/, '') : name);
    if (dir) continue;
    if (names.has(name)) throw refuse(`The file path '${name.slice(0, 200)}' appears twice in the zip.`);
    names.add(name);
    if (flags & 1) throw refuse(`The zip entry '${name.slice(0, 200)}' is encrypted.`);
    if (method !== 0 && method !== 8) throw refuse(`The zip entry '${name.slice(0, 200)}' uses compression method ${method}; only stored and deflated entries are read.`);
    if (size === 0xffffffff || compressed === 0xffffffff) throw refuse('ZIP64 archives are not accepted: a skill is at most 25 MB.');
    declared += size;
    if (declared > MAX_BYTES) throw refuse(`A skill is at most 25 MB unpacked; the zip declares more.`);
    if (name.startsWith('__MACOSX/')) continue;
    files.push({ path: name, size });
  }
  if (files.length > MAX_FILES) throw refuse(`A skill holds at most ${MAX_FILES} files; the zip has ${files.length}.`);
  return files;
}

/** Inflates one entry, refusing it the moment it passes its declared size. */
function inflate(file: JSZip.JSZipObject, declared: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let bytes = 0;
    let done = false;
    // jszip's own chunked stream (untyped in its declarations): pausing it stops the inflation.
    const stream = (file as unknown as { internalStream(type: 'nodebuffer'): JSZip.JSZipStreamHelper<Buffer> }).internalStream('nodebuffer');
    const stop = (err: unknown) => {
      if (done) return;
      done = true;
      stream.pause();
      reject(err);
    };
    stream
      .on('data', (chunk: Buffer) => {
        if (done) return;
        bytes += chunk.length;
        if (bytes > declared) return stop(refuse(`The zip entry '${file.name.slice(0, 200)}' inflates to more than the ${declared} bytes it declares; the zip is refused.`));
        chunks.push(chunk);
      })
      .on('error', (err: Error) => stop(refuse(`The zip entry '${file.name.slice(0, 200)}' cannot be inflated: ${err.message}`)))
      .on('end', () => {
        if (done) return;
        done = true;
        if (bytes !== declared) reject(refuse(`The zip entry '${file.name.slice(0, 200)}' inflates to ${bytes} bytes, not the ${declared} it declares.`));
        else resolve(Buffer.concat(chunks, bytes));
      })
      .resume();
  });
}

/** The zip's files, checked and inflated within the skill's limits. */
export async function readZip(data: Buffer): Promise<ZipEntry[]> {
  const listed = listZip(data);
  let zip: JSZip;
  try {
    zip = await JSZip.loadAsync(data, { createFolders: false });
  } catch (err) {
    throw refuse(`The zip file cannot be read: ${(err as Error).message}`);
  }
  // jszip must see the same files the central directory walk checked (an extra field may rename one).
  const theirs = Object.values(zip.files).filter((f) => !f.dir && !(f.unsafeOriginalName ?? f.name).startsWith('__MACOSX/'));
  const ours = new Set(listed.map((f) => f.path));
  if (theirs.length !== listed.length || theirs.some((f) => !ours.has(f.unsafeOriginalName ?? f.name) || f.name !== (f.unsafeOriginalName ?? f.name))) {
    throw refuse('The zip file lists its entries inconsistently (duplicate or renamed entries); it is refused.');
  }
  const out: ZipEntry[] = [];
  let total = 0;
  for (const { path, size } of listed) {
    const data = await inflate(zip.file(path)!, size);
    total += data.length;
    if (total > MAX_BYTES) throw refuse('A skill is at most 25 MB unpacked.');
    out.push({ path, data });
  }
  return out;
}
