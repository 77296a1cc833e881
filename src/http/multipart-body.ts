// The multipart/form-data parser: the body is read as a stream (busboy), file parts go
// straight into the blob store under the cap their contract table sets (never buffered:
// a 100 MB batch file holds a chunk at a time), text parts are collected into a
// FormBody, which the contract step then classifies and validates like a JSON body.
// Fastify's body limit applies to buffered parsers only; this one bounds the file parts
// by the table, and text parts, part counts and part headers by the limits below.
//
// A refused or failed form leaves no blob: the parser deletes what it stored before it
// answers, and uploads no handler claimed are discarded before an error answer goes out
// and, at the latest, when the response closes (a client gone included).
import type { IncomingMessage } from 'node:http';
import { Transform, type Readable } from 'node:stream';
import { Busboy } from '@fastify/busboy';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { BlobTooLarge, type BlobStore } from '../blobs/blob-store.ts';
import { uploadCap, uploadTooLarge, type CompiledTable } from '../contract/check.ts';
import { FormBody, UploadedFile } from '../contract/form.ts';
import { ApiError, invalidRequest } from '../errors.ts';
import { compileContract } from '../pipeline/contract.ts';
import type { RouteConfig } from '../pipeline/call.ts';

/** Far above any form of the reference API (a file and a few fields). */
export const FORM_LIMITS = { fields: 100, files: 10, fieldBytes: 64 * 1024, headerBytes: 16 * 1024, headerPairs: 20, unusedFileBytes: 1024 * 1024 } as const;

/** Stands in for a file part that was not stored: valid for no field. */
const FILE_PART = Object.freeze({ type: 'file part' });

const staged = new WeakMap<FastifyRequest, UploadedFile[]>();

/** Deletes the request's uploads that no handler claimed. */
async function discardUploads(request: FastifyRequest): Promise<void> {
  const files = staged.get(request);
  if (files) await Promise.all(files.map((f) => f.discard()));
}

export function installMultipartBodyParser(app: FastifyInstance, blobs: BlobStore): void {
  app.addContentTypeParser('multipart/form-data', (request: FastifyRequest, payload: Readable) => readForm(request, payload, blobs));
  // Only on the routes that take a form: a hook on every request would cost every JSON
  // request two more asynchronous steps (and an onSend pass) for nothing.
  app.addHook('onRoute', (route) => {
    if ((route.config as { agent?: RouteConfig } | undefined)?.agent?.contract?.body?.type !== 'multipart') return;
    route.onRequest = [...hookList(route.onRequest), watchUploads];
    // Before a refusal goes out, so whoever reads the 4xx finds no blob behind it.
    route.onSend = [...hookList(route.onSend), discardOnRefusal];
  });
}

function hookList<T>(hooks: T | T[] | undefined): T[] {
  return hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];
}

function watchUploads(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.raw.once('close', () => void discardUploads(request).catch((err: unknown) => request.log.warn({ err }, 'could not delete an unclaimed upload')));
  done();
}

async function discardOnRefusal(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  if (reply.statusCode >= 400) await discardUploads(request);
  return payload;
}

function readForm(request: FastifyRequest, payload: Readable, blobs: BlobStore): Promise<FormBody> {
  const contract = request.state?.route?.contract;
  const table = contract?.body?.type === 'multipart' ? compileContract(contract).body : undefined;
  if (!table) return Promise.reject(invalidRequest('Unsupported Content-Type: send the body as application/json.'));
  // A field taking several files (a directory upload) raises the form's file count and keeps paths.
  const many = [...table.uploads.values()].reduce((n, limit) => n + (limit.many?.maxFiles ?? 0), 0);
  // One part more than allowed reaches the handler of its field, which refuses it by name.
  const files = Math.max(FORM_LIMITS.files, many + 1);
  let parser: ReturnType<typeof Busboy>;
  try {
    parser = Busboy({
      headers: request.headers as Parameters<typeof Busboy>[0]['headers'],
      // A part is a file when it has a filename (RFC 7578); a file field sent as text fails its schema.
      isPartAFile: (_name, _type, filename) => filename !== undefined,
      // Otherwise busboy keeps only the last segment of a filename.
      preservePath: many > 0,
      // Larger buffers than the 16 KiB default: fewer, larger writes into the blob store.
      highWaterMark: 1024 * 1024,
      fileHwm: 1024 * 1024,
      limits: {
        fields: FORM_LIMITS.fields,
        files,
        parts: FORM_LIMITS.fields + files,
        fieldSize: FORM_LIMITS.fieldBytes,
        headerSize: FORM_LIMITS.headerBytes,
        headerPairs: FORM_LIMITS.headerPairs,
      },
    });
  } catch (err) {
    // A missing or unusable boundary.
    return Promise.reject(invalidRequest(`The multipart body cannot be read: ${(err as Error).message}.`));
  }
  const uploads: UploadedFile[] = [];
  staged.set(request, uploads);
  return new FormReader(request.raw, payload, parser, table, blobs, uploads, files).read();
}

class FormReader {
  private readonly form = new FormBody();
  /** Puts in flight, and the file streams they read (destroyed on failure, so each put removes its temp file). */
  private readonly pending = new Set<Promise<void>>();
  private readonly streams = new Set<Readable>();
  private readonly fileFields = new Set<string>();
  /** Parts and bytes so far of each field that takes several files. */
  private readonly manyParts = new Map<string, { parts: number; bytes: number }>();
  private failed = false;
  private resolve!: (form: FormBody) => void;
  private reject!: (err: unknown) => void;

  constructor(
    private readonly raw: IncomingMessage,
    private readonly payload: Readable,
    private readonly parser: ReturnType<typeof Busboy>,
    private readonly table: CompiledTable,
    private readonly blobs: BlobStore,
    private readonly uploads: UploadedFile[],
    private readonly maxFiles: number,
  ) {}

  read(): Promise<FormBody> {
    const done = new Promise<FormBody>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    const { parser, payload } = this;
    parser.on('file', (name, stream, filename, _encoding, mimeType) => this.onFile(name, stream, filename, mimeType));
    parser.on('field', (name, value, _nameTruncated, valueTruncated) => this.onField(name, value, valueTruncated));
    for (const limit of ['fieldsLimit', 'filesLimit', 'partsLimit'] as const) {
      parser.on(limit, () => this.fail(invalidRequest(`The form has too many parts: at most ${FORM_LIMITS.fields} fields and ${this.maxFiles} files.`)));
    }
    parser.on('error', (err: unknown) => this.fail(err));
    parser.on('finish', () => void this.finish());
    payload.on('error', (err) => this.fail(err));
    // The client went away mid-body: the in-flight puts must not wait for bytes forever.
    payload.on('close', () => {
      if (!this.raw.complete) this.fail(invalidRequest('The request body ended early.'));
    });
    payload.pipe(parser);
    return done;
  }

  private onFile(name: string, stream: Readable, filename: string, contentType: string): void {
    // Every file stream gets a listener before anything else: busboy emits a part's
    // failure (a body cut inside it) on its stream, and an 'error' nobody listens to
    // throws out of the event loop and ends the process. A stored part's failure is
    // reported by its store (which names the field); a dropped part has no other.
    stream.on('error', (err) => {
      if (!this.streams.has(stream)) this.fail(err);
    });
    const listed = name.endsWith('[]') ? this.table.uploads.get(name.slice(0, -2)) : undefined;
    if (listed?.many) return this.onManyFile(name.slice(0, -2), listed.many.maxFiles, listed.maxBytes, stream, filename, contentType);
    const limit = this.table.uploads.get(name);
    if (limit?.many) return this.onManyFile(name, limit.many.maxFiles, limit.maxBytes, stream, filename, contentType);
    if (this.failed || !limit || this.fileFields.has(name)) {
      // Not stored: a part for no file field (unknown: named as ignored; a text field:
      // fails its schema), or a second file for one (the field becomes a list, which its
      // schema refuses).
      if (!this.failed) this.form.add(name, FILE_PART);
      // Read and dropped, within bounds: only file fields may be large.
      let read = 0;
      stream.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > FORM_LIMITS.unusedFileBytes) this.fail(invalidRequest(`The file part '${name.slice(0, 100)}' is not used by this endpoint and is larger than 1 MB.`, name));
      });
      return;
    }
    this.fileFields.add(name);
    this.streams.add(stream);
    this.store(name, stream, stream, filename, contentType, uploadCap(limit, filename, this.form.values), () => uploadTooLarge(name, limit));
  }

  /**
   * A part of a field that takes several files (`name` repeated or `name[]`): counted, and
   * its bytes metered against what the field's earlier parts left of the total.
   */
  private onManyFile(name: string, maxFiles: number, maxBytes: number, stream: Readable, filename: string, contentType: string): void {
    if (this.failed) return void stream.resume();
    const seen = this.manyParts.get(name) ?? { parts: 0, bytes: 0 };
    this.manyParts.set(name, seen);
    if (++seen.parts > maxFiles) {
      stream.resume();
      return this.fail(invalidRequest(`'${name}' takes at most ${maxFiles} files.`, name));
    }
    const tooLarge = () => uploadTooLarge(name, { maxBytes, many: { maxFiles } });
    const meter = new Transform({
      transform(chunk: Buffer, _encoding, callback) {
        seen.bytes += chunk.length;
        callback(seen.bytes > maxBytes ? new BlobTooLarge(maxBytes) : null, chunk);
      },
    });
    stream.on('error', (err) => meter.destroy(err));
    this.streams.add(stream);
    stream.pipe(meter);
    this.store(name, stream, meter, filename, contentType, maxBytes, tooLarge);
  }

  private store(name: string, stream: Readable, source: Readable, filename: string, contentType: string, maxBytes: number, tooLarge: () => ApiError): void {
    this.streams.add(source);
    const put = this.blobs.put(source, { maxBytes }).then(
      (blob) => {
        const file = new UploadedFile(filename, contentType, blob, (key) => this.blobs.delete(key));
        this.uploads.push(file);
        this.form.add(name, file);
      },
      (err: unknown) => this.fail(err instanceof BlobTooLarge ? tooLarge() : err),
    );
    const tracked = put.finally(() => {
      this.streams.delete(stream);
      this.streams.delete(source);
      this.pending.delete(tracked);
    });
    this.pending.add(tracked);
  }

  private onField(name: string, value: string, truncated: boolean): void {
    if (this.failed) return;
    if (truncated) return this.fail(invalidRequest(`The form field '${name.slice(0, 100)}' is longer than ${FORM_LIMITS.fieldBytes / 1024} KB.`, name));
    this.form.add(name, value);
  }

  private async finish(): Promise<void> {
    while (this.pending.size > 0) await Promise.all(this.pending);
    if (!this.failed) this.resolve(this.form);
  }

  /** Stops reading, deletes whatever was stored, then refuses (once). */
  private fail(err: unknown): void {
    // A part over its cap: the blob store's meter destroys the part's stream with it, and
    // the put that metered it fails the form with the field's own error (naming it).
    if (err instanceof BlobTooLarge) return;
    if (this.failed) return;
    this.failed = true;
    this.payload.unpipe(this.parser);
    for (const stream of this.streams) stream.destroy();
    const error = err instanceof ApiError ? err : invalidRequest(`The multipart body cannot be read: ${(err as Error)?.message ?? String(err)}.`);
    void (async () => {
      while (this.pending.size > 0) await Promise.allSettled(this.pending);
      await Promise.all(this.uploads.map((f) => f.discard()));
    })().then(
      () => this.reject(error),
      (cleanupErr: unknown) => this.reject(cleanupErr),
    );
  }
}
