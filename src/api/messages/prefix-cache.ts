// cache_control on the offline engine: a real per-account prefix cache. The prefix is
// the request up to its last breakpoint, in the vendor's order (tools, system,
// messages; a top-level cache_control puts the breakpoint after the last block). Its
// first use is reported as cache_creation_input_tokens, a repeat within the breakpoint's
// ttl as cache_read_input_tokens, and input_tokens is what follows it. An upstream
// reports its own cached tokens instead. Entries live in this process (another instance
// counts a creation the first time it sees a prefix), bounded per account and in all.
import { createHash } from 'node:crypto';
import { invalidRequest } from '../../errors.ts';
import { MAX_CACHE_BREAKPOINTS } from '../../contract/endpoints/messages.ts';

/** The vendor's smallest cacheable prefix; a shorter one is not cached (and reports nothing). */
export const MIN_CACHEABLE_TOKENS = 1_024;
const TTL_MS = { '5m': 5 * 60_000, '1h': 60 * 60_000 } as const;
const MAX_ENTRIES = 10_000;
const MAX_PER_ACCOUNT = 256;

type Block = Record<string, any>;

export interface CachePrefix {
  /** The body cut after its last breakpoint: what the prefix's tokens are counted from. */
  body: Block;
  ttlMs: number;
}

/**
 * The request cut after its last cache_control breakpoint, or null without one. More
 * than MAX_CACHE_BREAKPOINTS breakpoints is a 400 naming the one too many.
 */
export function cachePrefix(body: Block): CachePrefix | null {
  const marks: { path: string; ttl: string; cut: () => Block }[] = [];
  const mark = (cc: unknown, path: string, cut: () => Block) => {
    if (cc && typeof cc === 'object') marks.push({ path, ttl: (cc as { ttl?: string }).ttl ?? '5m', cut });
  };
  const tools = (body.tools as Block[] | undefined) ?? [];
  tools.forEach((t, i) => mark(t.cache_control, `tools[${i}].cache_control`, () => ({ tools: tools.slice(0, i + 1), messages: [] })));
  const system = Array.isArray(body.system) ? (body.system as Block[]) : [];
  system.forEach((b, i) => mark(b.cache_control, `system[${i}].cache_control`, () => ({ tools, system: system.slice(0, i + 1), messages: [] })));
  const messages = body.messages as Block[];
  messages.forEach((m, i) => {
    if (!Array.isArray(m.content)) return;
    (m.content as Block[]).forEach((b, j) =>
      mark(b.cache_control, `messages[${i}].content[${j}].cache_control`, () => ({
        tools,
        ...(body.system !== undefined ? { system: body.system } : {}),
        messages: [...messages.slice(0, i), { ...m, content: (m.content as Block[]).slice(0, j + 1) }],
      })),
    );
  });
  if (marks.length > MAX_CACHE_BREAKPOINTS) throw invalidRequest(`A request may hold at most ${MAX_CACHE_BREAKPOINTS} cache_control breakpoints.`, marks[MAX_CACHE_BREAKPOINTS]!.path);
  // Automatic caching: a breakpoint after the last block of the request.
  if (body.cache_control && typeof body.cache_control === 'object') {
    const ttl = (body.cache_control as { ttl?: string }).ttl ?? '5m';
    return { body: { tools, ...(body.system !== undefined ? { system: body.system } : {}), messages }, ttlMs: TTL_MS[ttl as keyof typeof TTL_MS] ?? TTL_MS['5m'] };
  }
  const last = marks.at(-1);
  if (!last) return null;
  return { body: last.cut(), ttlMs: TTL_MS[last.ttl as keyof typeof TTL_MS] ?? TTL_MS['5m'] };
}

/** The prefixes each account has written, with when each expires (a read refreshes it, as the vendor's does). */
export class PrefixCache {
  private readonly entries = new Map<string, number>();
  private readonly perAccount = new Map<string, string[]>();

  constructor(private readonly now: () => number = Date.now) {}

  /** `created`: first seen (or expired); `read`: a live entry. Either way the entry lives `ttlMs` from now. */
  use(accountId: string, model: string, prefixBody: Block, ttlMs: number): 'created' | 'read' {
    const key = createHash('sha256').update(accountId).update('\0').update(model).update('\0').update(JSON.stringify(prefixBody)).digest('base64url');
    const now = this.now();
    const expires = this.entries.get(key);
    const live = expires !== undefined && expires > now;
    this.entries.delete(key); // re-inserted last: the Map's order is the eviction order
    this.entries.set(key, now + ttlMs);
    if (!live) this.remember(accountId, key);
    while (this.entries.size > MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value!);
    return live ? 'read' : 'created';
  }

  private remember(accountId: string, key: string): void {
    const keys = this.perAccount.get(accountId) ?? [];
    keys.push(key);
    // One account cannot push every other account's prefixes out.
    while (keys.length > MAX_PER_ACCOUNT) this.entries.delete(keys.shift()!);
    this.perAccount.set(accountId, keys);
  }
}
