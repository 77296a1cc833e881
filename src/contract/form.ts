// A multipart form as the transport read it (http/multipart-body.ts): text values and
// uploaded files by field name, for the contract step to classify and validate like a
// JSON body. Files are already in the blob store when the checker sees them.
import type { BlobInfo } from '../blobs/blob-store.ts';

/**
 * A file part, stored as a blob. It is "staged" until a handler claims it; the transport
 * discards staged files once the request is answered, so a refused or failed upload
 * leaves no blob. Claim and discard are synchronous decisions, so a client that goes
 * away while a handler runs cannot have its blob deleted under a row being written.
 */
export class UploadedFile {
  #state: 'staged' | 'claimed' | 'discarded' = 'staged';

  constructor(
    readonly filename: string,
    /** The part's Content-Type as sent (not trusted for anything). */
    readonly contentType: string,
    readonly blob: BlobInfo,
    private readonly remove: (key: string) => Promise<void>,
  ) {}

  get bytes(): number {
    return this.blob.bytes;
  }

  /** Takes the blob over: the caller keeps it or deletes it. Throws once discarded. */
  claim(): BlobInfo {
    if (this.#state !== 'staged') throw new Error(`the upload of ${this.filename} was ${this.#state} already`);
    this.#state = 'claimed';
    return this.blob;
  }

  /** Deletes the blob unless a handler claimed it. */
  async discard(): Promise<void> {
    if (this.#state !== 'staged') return;
    this.#state = 'discarded';
    await this.remove(this.blob.key);
  }
}

/** Field values by name: a string, an UploadedFile, or a list of them when the name was repeated. */
export class FormBody {
  readonly values: Record<string, unknown> = Object.create(null);

  add(name: string, value: unknown): void {
    const had = this.values[name];
    this.values[name] = had === undefined ? value : Array.isArray(had) ? [...had, value] : [had, value];
  }
}
