// The Range header of a file download (RFC 9110 §14): one range of bytes is served as
// 206; anything else (several ranges, other units, a malformed or unsatisfiable range)
// is ignored and the whole file served, which the RFC allows, so no 416 is needed.

export interface Satisfiable {
  /** inclusive offsets */
  start: number;
  end: number;
}

export function parseRange(header: string | undefined, size: number): Satisfiable | undefined {
  if (header === undefined || size === 0) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined;
  if (m[1] === '') {
    // A suffix: the last N bytes.
    const n = Number(m[2]);
    return n > 0 ? { start: Math.max(0, size - n), end: size - 1 } : undefined;
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  return Number.isSafeInteger(start) && start < size && start <= end ? { start, end } : undefined;
}
