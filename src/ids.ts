// Object ids: a prefix, then a time part and a random part. The time part makes ids
// sort by creation, so cursor pagination can order by id alone.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

function randomChars(n: number): string {
  const bytes = randomBytes(n);
  let out = '';
  // 62 does not divide 256; the bias (4/256 on the low characters) does not matter for ids.
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i]! % 62];
  return out;
}

let lastMs = 0;
let counter = 0;

/** `prefix` + 9 base-36 time characters + a 4-character sequence + 12 random characters. */
export function newId(prefix: string): string {
  const now = Date.now();
  if (now === lastMs) counter++;
  else {
    lastMs = now;
    counter = 0;
  }
  const time = now.toString(36).padStart(9, '0');
  const seq = counter.toString(36).padStart(4, '0');
  return `${prefix}${time}${seq}${randomChars(12)}`;
}

/** A secret API key: 32 random bytes, base64url. */
export function newSecret(prefix = 'sk-agent-'): string {
  return prefix + randomBytes(32).toString('base64url');
}
