// The one error of src/documents/: a file that cannot become text. Its message names the
// file and says why, in words a person uploading it can act on; the code tells the
// caller what to answer (an unsupported type, a broken file, a file without text).

export type DocumentErrorCode = 'unsupported_file' | 'invalid_file' | 'empty_file';

export class DocumentError extends Error {
  constructor(
    readonly code: DocumentErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'DocumentError';
  }

  /** `The file '<name>' <detail>`, the name cut and cleaned (it comes from the uploader). */
  static about(code: DocumentErrorCode, filename: string, detail: string, cause?: unknown): DocumentError {
    return new DocumentError(code, `The file '${displayName(filename)}' ${detail}`, cause === undefined ? undefined : { cause });
  }
}

const MAX_NAME_CHARS = 120;

/** The file name fit for a message: control characters and quotes replaced, at most 120 characters. */
export function displayName(filename: string): string {
  const chars = [...filename.slice(0, MAX_NAME_CHARS * 2 + 2)];
  const shown = chars
    .slice(0, MAX_NAME_CHARS)
    .map((ch) => (ch < ' ' || ch === '\x7f' || ch === "'" ? '?' : ch))
    .join('');
  return chars.length > MAX_NAME_CHARS ? `${shown}…` : shown;
}
