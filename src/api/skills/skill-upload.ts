// A skill version's files from a multipart `files` field: one zip, or several files each
// named by its path. Everything is checked before any blob is kept: the multipart parser
// has bounded the parts (500, 25 MB in total); a zip is listed and inflated within the same
// limits (skill-zip.ts); the paths make a skill (skill-files.ts). A directory upload's parts
// become the version's blobs as they are; a zip's files are stored one blob each.
import { Readable } from 'node:stream';
import type { BlobStore } from '../../blobs/blob-store.ts';
import type { UploadedFile } from '../../contract/form.ts';
import { MAX_BYTES, parseFrontMatter, refuse, skillLayout, SKILL_MD, type FrontMatter } from './skill-files.ts';
import { looksLikeZip, readZip } from './skill-zip.ts';
import type { SkillFileEntry } from './skills-store.ts';

export interface SkillUpload {
  front: FrontMatter;
  files: SkillFileEntry[];
}

async function readBlob(blobs: BlobStore, key: string): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of await blobs.get(key)) {
    bytes += (chunk as Buffer).length;
    if (bytes > MAX_BYTES) throw refuse('A skill is at most 25 MB unpacked.');
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, bytes);
}

const isZipName = (name: string) => name.toLowerCase().endsWith('.zip');

/** Checks the upload and stores its files; the caller owns the returned blobs (and deletes them if it fails). */
export async function takeUpload(blobs: BlobStore, field: UploadedFile | UploadedFile[]): Promise<SkillUpload> {
  const parts = Array.isArray(field) ? field : [field];
  if (parts.length === 1 && parts[0]!.filename.split('/').pop() !== SKILL_MD) {
    const data = await readBlob(blobs, parts[0]!.blob.key);
    if (isZipName(parts[0]!.filename) || looksLikeZip(data)) return storeZip(blobs, data);
  }
  const { strip } = skillLayout(parts.map((p) => p.filename));
  const skillMd = parts.find((p) => p.filename === `${strip}${SKILL_MD}`)!;
  const front = parseFrontMatter(await readBlob(blobs, skillMd.blob.key));
  // Checked: the parts' blobs are the version's.
  const files = parts.map((p) => {
    const blob = p.claim();
    return { path: p.filename.slice(strip.length), blob_key: blob.key, bytes: blob.bytes };
  });
  return { front, files };
}

async function storeZip(blobs: BlobStore, data: Buffer): Promise<SkillUpload> {
  const entries = await readZip(data);
  const { strip } = skillLayout(entries.map((e) => e.path));
  const front = parseFrontMatter(entries.find((e) => e.path === `${strip}${SKILL_MD}`)!.data);
  const files: SkillFileEntry[] = [];
  try {
    for (const entry of entries) {
      const blob = await blobs.put(Readable.from(entry.data.length > 0 ? [entry.data] : [], { objectMode: false }), { maxBytes: MAX_BYTES });
      files.push({ path: entry.path.slice(strip.length), blob_key: blob.key, bytes: blob.bytes });
    }
  } catch (err) {
    await Promise.all(files.map((f) => blobs.delete(f.blob_key)));
    throw err;
  }
  return { front, files };
}
