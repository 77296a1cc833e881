// The outbound guard: every address a caller or a page chose (an MCP server, a page to
// open, each redirect) is fetched only through here. `https` only; the name is resolved
// and every address it resolves to must be public unicast (no loopback, private,
// link-local, CGNAT, unique-local, multicast, reserved, IPv4-mapped, NAT64, 6to4 or
// Teredo forms; numeric hosts such as `2130706433` are normalised by the URL parser
// first), and cloud metadata names are refused outright. The connection goes to the
// address that was checked (the connector is given the IP, the TLS check keeps the
// name), so a name cannot resolve once to a public address and again to a private one.
// Redirects are followed by hand, each hop checked again; time and size are capped.
// Operator-configured endpoints (the upstream, a search backend) do not come here.
//
// AGENT_API_OUTBOUND_ALLOW (tests only, warned at start): hosts, host:port pairs or CIDRs
// exempted from the address checks, where plain http is allowed too.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector, fetch, type Dispatcher, type Response } from 'undici';
import { parseAllowEntry, ipAllowed, type Range } from '../keys/ip-allowlist.ts';

/** Why the guard refused an address: said to the caller (or the model) as is. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'OutboundRefused';
  }
}

/** The answer was larger than the cap given: refused like any other (an OutboundRefused), told apart by callers that say so. */
export class OutboundTooLarge extends OutboundRefused {
  constructor(maxBytes: number) {
    super(`The answer is larger than ${maxBytes} bytes.`);
  }
}

/** Names that answer with a cloud instance's credentials, whatever they resolve to. */
const METADATA_HOSTS = new Set(['metadata.google.internal', 'metadata.goog', 'metadata', 'metadata.azure.com', 'instance-data', 'instance-data.ec2.internal']);

export interface OutboundAllow {
  hosts: Set<string>;
  hostPorts: Set<string>;
  ranges: Range[];
}

/** Parses AGENT_API_OUTBOUND_ALLOW: `host`, `host:port` or a CIDR, comma-separated. */
export function parseOutboundAllow(value: string | undefined): OutboundAllow {
  const allow: OutboundAllow = { hosts: new Set(), hostPorts: new Set(), ranges: [] };
  for (const raw of (value ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    if (entry.includes('/') || net.isIP(entry)) allow.ranges.push(parseAllowEntry(entry));
    else if (/^[^:]+:\d+$/.test(entry)) allow.hostPorts.add(entry);
    else if (/^\[[0-9a-f:.]+\]:\d+$/.test(entry)) allow.hostPorts.add(entry);
    else allow.hosts.add(entry);
  }
  return allow;
}

/** Whether AGENT_API_OUTBOUND_ALLOW's value parses. */
export function isValidOutboundAllow(value: string): boolean {
  try {
    parseOutboundAllow(value);
    return true;
  } catch {
    return false;
  }
}

export const isAllowEmpty = (a: OutboundAllow) => a.hosts.size === 0 && a.hostPorts.size === 0 && a.ranges.length === 0;

type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;
const systemLookup: Lookup = (hostname) => dns.promises.lookup(hostname, { all: true, verbatim: true });

export interface GuardOptions {
  allow?: OutboundAllow;
  /** How names resolve (tests map names to addresses). */
  lookup?: Lookup;
}

/** Whether an address is one the service may reach for a caller: public unicast only. */
export function isPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return false;
  }
  // ipaddr.js names every special range (loopback, private, linkLocal, carrierGradeNat,
  // uniqueLocal, multicast, reserved, ipv4Mapped, rfc6052 NAT64, 6to4, teredo, ...);
  // anything but plain unicast is refused, an embedded IPv4 address included.
  if (parsed.range() !== 'unicast') return false;
  if (parsed.kind() === 'ipv6') {
    // The deprecated IPv4-compatible form (::a.b.c.d, ::/96) that ipaddr.js calls unicast.
    if ((parsed as ipaddr.IPv6).parts.slice(0, 6).every((p) => p === 0)) return false;
  } else if (CLOUD_INTERNAL_IPV4.has(parsed.toString())) return false;
  return true;
}

/** Public-looking addresses a cloud host answers for itself (Azure's WireServer). */
const CLOUD_INTERNAL_IPV4 = new Set(['168.63.129.16']);

// A trailing dot names the same host (metadata.google.internal. is metadata.google.internal).
const hostOf = (url: URL) => url.hostname.replace(/^\[|\]$/g, '').toLowerCase().replace(/\.$/, '');
const portOf = (url: URL) => url.port || (url.protocol === 'https:' ? '443' : '80');

export class OutboundGuard {
  private readonly allow: OutboundAllow;
  private readonly lookup: Lookup;
  readonly dispatcher: Dispatcher;

  constructor(options: GuardOptions = {}) {
    this.allow = options.allow ?? parseOutboundAllow(undefined);
    this.lookup = options.lookup ?? systemLookup;
    const base = buildConnector({});
    // Every connection: the name resolved and checked here, then the checked address
    // connected to (TLS still verifies the certificate for the name).
    this.dispatcher = new Agent({
      connect: (opts, callback) => {
        const hostname = opts.hostname.replace(/^\[|\]$/g, '');
        this.resolve(hostname, String(opts.port || (opts.protocol === 'https:' ? 443 : 80))).then(
          (address) =>
            base({ ...opts, hostname: address, servername: opts.servername ?? (net.isIP(hostname) ? undefined : hostname) } as buildConnector.Options, callback),
          (err: Error) => callback(err, null),
        );
      },
    });
  }

  private allowedHost(host: string, port: string): boolean {
    return this.allow.hosts.has(host) || this.allow.hostPorts.has(`${net.isIPv6(host) ? `[${host}]` : host}:${port}`);
  }

  /**
   * Checks a URL before anything is sent: the scheme, the host's name and (for an IP
   * literal) its address. A name's addresses are checked when it is resolved, at connect.
   */
  checkUrl(input: string | URL): URL {
    let url: URL;
    try {
      url = new URL(input);
    } catch {
      throw new OutboundRefused('The address is not a valid URL.');
    }
    const host = hostOf(url);
    const allowed = this.allowedHost(host, portOf(url)) || (net.isIP(host) !== 0 && ipAllowed(host, this.allow.ranges));
    if (url.protocol !== 'https:' && !(allowed && url.protocol === 'http:')) throw new OutboundRefused(`Only https addresses may be fetched (got ${url.protocol.replace(':', '')}).`);
    if (url.username || url.password) throw new OutboundRefused('An address may not carry a user name or password.');
    if (METADATA_HOSTS.has(host)) throw new OutboundRefused(`${host} is a cloud metadata address, which is never fetched.`);
    if (net.isIP(host) && !allowed && !isPublicAddress(host)) throw new OutboundRefused(`${host} is not a public address.`);
    return url;
  }

  /**
   * Checks a URL and, for a name, resolves it and checks every address it has now, before
   * anything is sent (a caller's server refused up front). The connection checks again.
   */
  async checkAddress(input: string | URL): Promise<URL> {
    const url = this.checkUrl(input);
    await this.resolve(hostOf(url), portOf(url));
    return url;
  }

  /** The address to connect to: every address the name has must be public (or exempted). */
  private async resolve(hostname: string, port: string): Promise<string> {
    const host = hostname.toLowerCase();
    const exempt = this.allowedHost(host, port);
    if (net.isIP(host)) {
      if (exempt || ipAllowed(host, this.allow.ranges) || isPublicAddress(host)) return host;
      throw new OutboundRefused(`${host} is not a public address.`);
    }
    if (METADATA_HOSTS.has(host)) throw new OutboundRefused(`${host} is a cloud metadata address, which is never fetched.`);
    let addresses: { address: string }[];
    try {
      addresses = await this.lookup(host);
    } catch {
      throw new OutboundRefused(`${host} could not be resolved.`);
    }
    if (addresses.length === 0) throw new OutboundRefused(`${host} could not be resolved.`);
    // All of them: a name with one private address among public ones is refused.
    const bad = addresses.find((a) => !(exempt || ipAllowed(a.address, this.allow.ranges) || isPublicAddress(a.address)));
    // The address itself is not said: the caller (or a model) learns nothing of internal DNS.
    if (bad) throw new OutboundRefused(`${host} resolves to an address that is not public.`);
    return addresses[0]!.address;
  }

  /**
   * Fetches a caller-chosen URL: checked, connected through the guard, redirects followed
   * by hand (each hop checked again, at most `maxRedirects`), the body read up to
   * `maxBytes`, all within `timeoutMs`. Headers given go to the first origin only.
   */
  async fetch(
    input: string | URL,
    init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array; signal?: AbortSignal; maxBytes?: number; timeoutMs?: number; maxRedirects?: number } = {},
  ): Promise<{ url: string; status: number; headers: Response['headers']; body: Buffer }> {
    const maxBytes = init.maxBytes ?? 5 * 1024 * 1024;
    const maxRedirects = init.maxRedirects ?? 5;
    const timeout = AbortSignal.timeout(init.timeoutMs ?? 15_000);
    const signal = init.signal ? AbortSignal.any([init.signal, timeout]) : timeout;
    const res = await this.follow(this.checkUrl(input), init, signal, maxRedirects);
    return { url: res.url, status: res.status, headers: res.headers, body: await readCapped(res, maxBytes) };
  }

  /**
   * Sends the request and follows redirects by hand, each hop's address checked again (at
   * most `maxRedirects`); the caller's headers go to the first origin only. The answer
   * of the last hop, its body unread; its `url` is the address it came from.
   */
  private async follow(
    first: URL,
    init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array },
    signal: AbortSignal,
    maxRedirects: number,
  ): Promise<Response & { url: string }> {
    let url = first;
    const origin = url.origin;
    let method = init.method ?? 'GET';
    let body = init.body;
    for (let hop = 0; ; hop++) {
      const res = await fetch(url, {
        method,
        // Credentials meant for one server never follow a redirect to another origin.
        ...(url.origin === origin && init.headers ? { headers: init.headers } : {}),
        ...(body !== undefined ? { body } : {}),
        redirect: 'manual',
        signal,
        dispatcher: this.dispatcher,
      }).catch((err: unknown) => {
        throw unwrap(err);
      });
      const location = res.headers.get('location');
      if (res.status >= 300 && res.status < 400 && location) {
        await res.body?.cancel();
        if (hop >= maxRedirects) throw new OutboundRefused(`More than ${maxRedirects} redirects.`);
        url = this.checkUrl(new URL(location, url));
        if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
          method = 'GET';
          body = undefined;
        }
        continue;
      }
      return Object.defineProperty(res, 'url', { value: url.href }) as Response & { url: string };
    }
  }

  /**
   * Like `fetch()`, with the same checks (each hop checked, headers to the first origin
   * only), but the answer comes back as a WHATWG Response whose body streams: an MCP
   * server's Server-Sent Events stay open for as long as the caller reads. `timeoutMs`
   * bounds the wait for the last hop's headers, not the body (the caller's signal ends
   * that); `maxBytes` caps the body as it streams, which errors with OutboundTooLarge (an
   * OutboundRefused) past it.
   */
  async request(
    input: string | URL,
    init: { method?: string; headers?: Record<string, string>; body?: string | Uint8Array; signal?: AbortSignal; maxBytes?: number; timeoutMs?: number; maxRedirects?: number } = {},
  ): Promise<globalThis.Response> {
    const maxBytes = init.maxBytes ?? 5 * 1024 * 1024;
    const maxRedirects = init.maxRedirects ?? 5;
    init.signal?.throwIfAborted();
    const url = this.checkUrl(input);
    // One controller for the whole exchange: the timer ends the wait for headers, the
    // caller's signal ends it at any point, the body's read included.
    const controller = new AbortController();
    const onAbort = () => controller.abort(init.signal!.reason);
    init.signal?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')), init.timeoutMs ?? 15_000);
    const done = () => {
      clearTimeout(timer);
      init.signal?.removeEventListener('abort', onAbort);
    };
    try {
      const res = await this.follow(url, init, controller.signal, maxRedirects);
      clearTimeout(timer);
      const declared = Number(res.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        await res.body?.cancel();
        throw new OutboundTooLarge(maxBytes);
      }
      // undici's own Response class is not the global one the callers (the MCP SDK) expect.
      const head = { status: res.status, statusText: res.statusText, headers: new globalThis.Headers([...res.headers]) };
      let out: globalThis.Response;
      if (res.body === null || [204, 205, 304].includes(res.status)) {
        done();
        await res.body?.cancel();
        out = new globalThis.Response(null, head);
      } else out = new globalThis.Response(cappedStream(res.body as unknown as ReadableStream<Uint8Array>, maxBytes, done), head);
      // A constructed Response has no url; callers may want the one answered from.
      Object.defineProperty(out, 'url', { value: res.url });
      return out;
    } catch (err) {
      done();
      throw err;
    }
  }
}

/** The body passed on as it arrives, erroring once more than `maxBytes` came. */
function cappedStream(source: ReadableStream<Uint8Array>, maxBytes: number, done: () => void): ReadableStream<Uint8Array> {
  const reader = source.getReader();
  let size = 0;
  // A read may still be pending when the reader of this stream cancels it: what that read
  // brings is then dropped (the controller no longer takes anything).
  let cancelled = false;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: ended, value } = await reader.read();
        if (cancelled) return;
        if (ended) {
          done();
          return controller.close();
        }
        size += value.byteLength;
        if (size > maxBytes) {
          done();
          await reader.cancel().catch(() => undefined);
          return controller.error(new OutboundTooLarge(maxBytes));
        }
        controller.enqueue(value);
      } catch (err) {
        done();
        if (!cancelled) controller.error(unwrap(err));
      }
    },
    cancel(reason) {
      cancelled = true;
      done();
      return reader.cancel(reason);
    },
  });
}

/** undici wraps a connector's error in `TypeError: fetch failed`: the guard's refusal is the cause. */
function unwrap(err: unknown): unknown {
  let e: unknown = err;
  for (let i = 0; i < 4 && e instanceof Error; i++) {
    if (e instanceof OutboundRefused) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return err;
}

async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  const declared = Number(res.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw new OutboundTooLarge(maxBytes);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of res.body ?? []) {
    size += (chunk as Uint8Array).byteLength;
    if (size > maxBytes) {
      await res.body?.cancel().catch(() => undefined);
      throw new OutboundTooLarge(maxBytes);
    }
    chunks.push(chunk as Uint8Array);
  }
  return Buffer.concat(chunks);
}
