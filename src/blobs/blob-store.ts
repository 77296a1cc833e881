// The blob store: file bytes kept outside the database, behind one small streaming
// interface so files, container files, skills, images and batch outputs share it, and a
// store other than the local disk (S3-like) can replace it later. A put either stores
// the whole stream or leaves nothing behind.
import type { Readable } from 'node:stream';

export interface BlobInfo {
  /** Opaque to callers; kept in the row that owns the blob. */
  readonly key: string;
  readonly bytes: number;
  /** sha256 of the content, hex */
  readonly sha256: string;
}

export interface PutOptions {
  /** The stream is refused (BlobTooLarge) as soon as it passes this many bytes. */
  readonly maxBytes: number;
}

/** Inclusive byte offsets, as HTTP ranges count them. */
export interface ByteRange {
  readonly start?: number;
  readonly end?: number;
}

export interface BlobStore {
  /** Stores the stream whole, or rejects (too large, the stream failed) leaving no blob. */
  put(source: Readable, options: PutOptions): Promise<BlobInfo>;
  /** The blob's bytes (a range of them); rejects with BlobNotFound. */
  get(key: string, range?: ByteRange): Promise<Readable>;
  /** Size of a stored blob, or undefined. */
  stat(key: string): Promise<{ bytes: number } | undefined>;
  /** Removes a blob; a blob already gone is not an error. */
  delete(key: string): Promise<void>;
}

export class BlobTooLarge extends Error {
  override name = 'BlobTooLarge';
  constructor(readonly maxBytes: number) {
    super(`the content is larger than ${maxBytes} bytes`);
  }
}

export class BlobNotFound extends Error {
  override name = 'BlobNotFound';
  constructor(readonly key: string) {
    super(`no blob ${key}`);
  }
}
