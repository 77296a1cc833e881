// Scalars fitted to a schema's keywords: example strings for `format`, strings cut or
// padded to `minLength`/`maxLength` within the output room, numbers moved into range
// and onto a `multipleOf` step. Used by the JSON generator (json-from-schema.ts).
import type { JsonSchema } from './schema-check.ts';

function pad(n: number, width: number): string {
  return String(n).padStart(width, '0');
}

export function formatExample(format: string, v: number): string | undefined {
  switch (format) {
    case 'date':
      return `2024-01-${pad(1 + (v % 28), 2)}`;
    case 'date-time':
      return `2024-01-${pad(1 + (v % 28), 2)}T12:00:00Z`;
    case 'time':
      return `12:00:${pad(v % 60, 2)}Z`;
    case 'email':
    case 'idn-email':
      return v > 0 ? `user${v + 1}@example.com` : 'user@example.com';
    case 'uri':
    case 'url':
    case 'iri':
    case 'uri-reference':
    case 'iri-reference':
      return v > 0 ? `https://example.com/${v + 1}` : 'https://example.com/';
    case 'uuid':
      return `00000000-0000-4000-8000-${pad(v, 12)}`;
    case 'hostname':
    case 'idn-hostname':
      return v > 0 ? `host${v + 1}.example.com` : 'example.com';
    case 'ipv4':
      return `192.0.2.${1 + (v % 254)}`;
    case 'ipv6':
      return `2001:db8::${(v + 1).toString(16)}`;
    case 'duration':
      return `P${v + 1}D`;
    case 'json-pointer':
      return `/example${v > 0 ? v + 1 : ''}`;
    case 'relative-json-pointer':
      return String(v);
    case 'regex':
      return v > 0 ? `^example${v + 1}$` : '^example$';
    case 'byte':
      return Buffer.from(v > 0 ? `example ${v + 1}` : 'example').toString('base64');
    default:
      return undefined;
  }
}

/** `s` cut or padded to the length bounds (in code points), never past `room` characters. */
export function fitLength(s: string, flat: JsonSchema, variant: number, room: number): string {
  const min = Math.min(typeof flat.minLength === 'number' ? flat.minLength : 0, room);
  const max = Math.min(typeof flat.maxLength === 'number' ? flat.maxLength : Infinity, room);
  // No more than `max` code points are needed, and they lie within 2 * max code units.
  let chars = [...(s.length > 2 * max ? s.slice(0, 2 * max) : s)];
  if (chars.length > max) chars = chars.slice(0, max);
  let out = chars.join('');
  if (out.length > room) out = out.slice(0, room); // astral characters: keep to the room in code units too
  const filler = String.fromCharCode(97 + (variant % 26));
  return chars.length < min ? out + filler.repeat(Math.min(min - chars.length, room - out.length)) : out;
}

interface Bound {
  value: number;
  exclusive: boolean;
}

function bound(flat: JsonSchema, side: 'min' | 'max'): Bound | undefined {
  const inclusiveKey = side === 'min' ? 'minimum' : 'maximum';
  const exclusiveKey = side === 'min' ? 'exclusiveMinimum' : 'exclusiveMaximum';
  const found: Bound[] = [];
  const inc = flat[inclusiveKey];
  const exc = flat[exclusiveKey];
  if (typeof inc === 'number') found.push({ value: inc, exclusive: exc === true }); // draft-04 boolean form
  if (typeof exc === 'number') found.push({ value: exc, exclusive: true });
  if (found.length === 0) return undefined;
  // The stricter bound wins.
  return found.reduce((a, b) => {
    if (a.value === b.value) return a.exclusive ? a : b;
    return (side === 'min' ? b.value > a.value : b.value < a.value) ? b : a;
  });
}

/** Moves a number into range, onto an integer, onto a multipleOf step. */
export function fitNumber(candidate: number, flat: JsonSchema, integer: boolean): number {
  const lo = bound(flat, 'min');
  const hi = bound(flat, 'max');
  const inRange = (x: number): boolean =>
    (!lo || (lo.exclusive ? x > lo.value : x >= lo.value)) && (!hi || (hi.exclusive ? x < hi.value : x <= hi.value));
  let v = candidate;
  if (!inRange(v)) {
    if (lo && hi) v = !lo.exclusive ? lo.value : !hi.exclusive ? hi.value : (lo.value + hi.value) / 2;
    else if (lo) v = lo.exclusive ? lo.value + 1 : lo.value;
    else if (hi) v = hi.exclusive ? hi.value - 1 : hi.value;
  }
  if (integer && !Number.isInteger(v)) v = inRange(Math.ceil(v)) ? Math.ceil(v) : Math.floor(v);
  const step = flat.multipleOf;
  if (typeof step === 'number' && step > 0) {
    const base = Math.round(v / step);
    for (let d = 0; d <= 200; d++) {
      for (const k of d === 0 ? [base] : [base + d, base - d]) {
        const x = Number.parseFloat((k * step).toPrecision(15));
        const q = x / step;
        if (inRange(x) && q === Number.parseInt(String(q), 10) && (!integer || Number.isInteger(x))) return x;
      }
    }
  }
  return v;
}
