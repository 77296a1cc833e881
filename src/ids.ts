// Object ids: a prefix, then a time part and a random part. The time part makes ids
// sort by creation, so cursor pagination can order by id alone.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

// Random bytes are drawn from the OS in blocks: one system call per ~340 ids instead of
// one per id (ids are made twice per request, so this is on the hot path).
const POOL_SIZE = 4096;
let pool = randomBytes(POOL_SIZE);
let poolOffset = 0;

function randomChars(n: number): string {
  if (poolOffset + n > POOL_SIZE) {
    pool = randomBytes(POOL_SIZE);
    poolOffset = 0;
  }
  let out = '';
  // 62 does not divide 256; the bias (4/256 on the low characters) does not matter for ids.
  for (let i = 0; i < n; i++) out += ALPHABET[pool[poolOffset + i]! % 62];
  poolOffset += n;
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
