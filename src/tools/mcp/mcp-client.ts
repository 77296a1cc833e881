// The client side of the Responses `mcp` tool: lists a remote MCP server's tools and calls
// one, over MCP's Streamable HTTP transport (the SDK's Client), every request through the
// outbound guard (https only, public addresses only, each redirect checked, the server's
// headers never sent to another origin). Each operation opens its own session and ends it:
// nothing is kept between calls, so a caller's credentials live no longer than the call.
//
// What comes back is safe to show the caller and the model: every failure is an McpFailed
// written here (the SDK's own messages may quote an answer's body or a header), and the
// header values and token given for the server are blanked out of anything the server
// says in an error.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { McpError, type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { OutboundRefused, OutboundTooLarge, type OutboundGuard } from '../../outbound/guard.ts';

/** A remote MCP server as the `mcp` tool names it. */
export interface McpServer {
  /** `server_label`: names the server in messages. */
  label: string;
  /** `server_url`: the Streamable HTTP endpoint. */
  url: string;
  /** Sent with every request to that origin, never to another. */
  headers?: Record<string, string>;
  /** An access token, sent as `Authorization: Bearer <token>` (wins over an Authorization header). */
  authorization?: string;
}

/** One listed tool, in the fields of the reference's MCPListToolsTool. */
export interface McpToolInfo {
  name: string;
  description?: string;
  input_schema: object;
  annotations?: object | null;
}

/** Why a call did not run to an answer, for an `mcp_call` item's `error` (the reference's MCPToolCallError shapes). */
export type McpCallErrorDetail = { type: 'mcp_tool_execution_error'; content: { type: 'text'; text: string }[] } | { type: 'mcp_protocol_error'; code: number; message: string };

export type McpCallResult = { output: string } | { error: string; detail: McpCallErrorDetail };

export type McpFailure = 'invalid' | 'unreachable' | 'refused' | 'http' | 'timeout' | 'aborted' | 'protocol';

/**
 * The server could not be used. The message names the server's label and says why; it
 * never holds a header value or the token. `status` is the HTTP status when the server
 * answered with one (for an `http_error`).
 */
export class McpFailed extends Error {
  constructor(
    message: string,
    readonly kind: McpFailure,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'McpFailed';
  }
}

export const LIST_TIMEOUT_MS = 15_000;
export const CALL_TIMEOUT_MS = 30_000;
export const MAX_TOOLS = 100;
export const MAX_OUTPUT_CHARS = 100_000;
/** One listed tool (its schema, mostly) as JSON, and a whole listing: past them tools are dropped. */
const MAX_TOOL_JSON = 64 * 1024;
const MAX_LISTING_JSON = 1024 * 1024;
/** Per HTTP answer (an SSE stream counts as one). */
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
/** Pages of tools/list followed before giving up on a server that never stops paginating. */
const MAX_LIST_PAGES = 20;
/** How long closing a session politely may take before the connection is just dropped. */
const CLOSE_GRACE_MS = 2_000;
/** Headers the transport sets itself: a caller's would break the protocol. */
const TRANSPORT_HEADERS = new Set(['accept', 'content-type', 'content-length', 'host', 'connection', 'transfer-encoding', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id']);
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
// What fetch accepts in a header value: no control characters but tab, Latin-1 only.
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * The server's tools, at most `maxTools` (the rest dropped), names unique. A server that
 * does not offer tools has none. Throws McpFailed.
 */
export async function listMcpTools(guard: OutboundGuard, server: McpServer, opts: { signal?: AbortSignal; timeoutMs?: number; maxTools?: number } = {}): Promise<McpToolInfo[]> {
  const maxTools = opts.maxTools ?? MAX_TOOLS;
  return withSession(guard, server, opts.timeoutMs ?? LIST_TIMEOUT_MS, opts.signal, async (client, requestOptions, redact) => {
    if (!client.getServerCapabilities()?.tools) return [];
    const tools: McpToolInfo[] = [];
    const seen = new Set<string>();
    let listed = 0;
    let cursor: string | undefined;
    try {
      for (let page = 0; page < MAX_LIST_PAGES && tools.length < maxTools; page++) {
        const result = await client.listTools(cursor === undefined ? undefined : { cursor }, requestOptions);
        for (const tool of result.tools) {
          if (tools.length >= maxTools) break;
          if (seen.has(tool.name)) continue;
          seen.add(tool.name);
          const info = toolInfo(tool, redact);
          // A tool whose schema is past the cap is dropped, and the listing stops growing past its own.
          const size = JSON.stringify(info).length;
          if (size > MAX_TOOL_JSON || listed + size > MAX_LISTING_JSON) continue;
          listed += size;
          tools.push(info);
        }
        cursor = result.nextCursor;
        if (!cursor) break;
      }
    } catch (err) {
      if (err instanceof McpError && !requestOptions.signal.aborted) {
        throw new McpFailed(capped(redact(`The MCP server '${server.label}' could not list its tools: ${rpcMessage(err)}`), 2_000), 'protocol');
      }
      throw err;
    }
    return tools;
  });
}

/**
 * Calls one tool with the arguments as given. The tool's failure (`isError`) and a JSON-RPC
 * error from the server are answers: `{error}`, for the model to read. Text content is
 * joined, other content described in a line; past `maxOutputChars` the output is cut with
 * a note. Throws McpFailed when the server could not be used at all.
 */
export async function callMcpTool(
  guard: OutboundGuard,
  server: McpServer,
  name: string,
  args: Record<string, unknown>,
  opts: { signal?: AbortSignal; timeoutMs?: number; maxOutputChars?: number } = {},
): Promise<McpCallResult> {
  const maxChars = opts.maxOutputChars ?? MAX_OUTPUT_CHARS;
  return withSession(guard, server, opts.timeoutMs ?? CALL_TIMEOUT_MS, opts.signal, async (client, requestOptions, redact) => {
    let result: CallToolResult;
    try {
      result = (await client.callTool({ name, arguments: args }, undefined, requestOptions)) as CallToolResult;
    } catch (err) {
      if (err instanceof McpError && !requestOptions.signal.aborted) {
        const message = capped(redact(rpcMessage(err)), maxChars);
        return { error: message, detail: { type: 'mcp_protocol_error', code: err.code, message } };
      }
      throw err;
    }
    if (result.isError) {
      // The server's words, possibly quoting what it was sent: blanked like any error
      // (before the cut, which could leave part of a secret).
      const message = capped(redact(contentText(result)), maxChars) || `The tool '${name}' failed without saying why.`;
      return { error: message, detail: { type: 'mcp_tool_execution_error', content: [{ type: 'text', text: message }] } };
    }
    // A server echoing the token back must not get it stored with the item: blanked here too.
    return { output: capped(redact(contentText(result)), maxChars) };
  });
}

type RequestOptions = { signal: AbortSignal; timeout: number };

/**
 * Connects, runs `work`, closes. Time and the caller's signal bound the whole of it; any
 * failure on the way comes out as an McpFailed.
 */
async function withSession<T>(
  guard: OutboundGuard,
  server: McpServer,
  timeoutMs: number,
  signal: AbortSignal | undefined,
  work: (client: Client, options: RequestOptions, redact: (text: string) => string) => Promise<T>,
): Promise<T> {
  const redact = redactor(server);
  const label = server.label;
  const headers = requestHeaders(server);
  let url: URL;
  try {
    url = guard.checkUrl(server.url);
  } catch (err) {
    throw new McpFailed(redact(`The MCP server '${label}' is not reachable: ${err instanceof Error ? err.message : 'its address was refused'}`), 'unreachable');
  }
  if (signal?.aborted) throw new McpFailed(redact(`The request to the MCP server '${label}' was cancelled.`), 'aborted');

  // Told apart by identity; their text is what the server hears in notifications/cancelled.
  const TIMEOUT = new Error('The client stopped waiting.');
  const ABORTED = new Error('The client cancelled the request.');
  const stop = new AbortController();
  const timer = setTimeout(() => stop.abort(TIMEOUT), timeoutMs);
  const onAbort = () => stop.abort(ABORTED);
  signal?.addEventListener('abort', onAbort, { once: true });
  // A failure the SDK only reports on the side (an SSE answer cut off or too large leaves
  // its request waiting): it ends the operation at once.
  let broken: McpFailed | undefined;
  let closing = false;
  const onBodyError = (err: unknown, method: string) => {
    if (closing || stop.signal.aborted) return;
    const tooLarge = findCause(err, OutboundTooLarge);
    // The GET stream is the SDK's to re-open; only a POST's answer carries a result.
    if (!tooLarge && method !== 'POST') return;
    broken = tooLarge
      ? new McpFailed(redact(`The MCP server '${label}' sent an answer that was refused: ${tooLarge.message}`), 'protocol')
      : new McpFailed(redact(`The MCP server '${label}' broke off its answer.`), 'unreachable');
    stop.abort(broken);
  };

  const transport = new StreamableHTTPClientTransport(url, {
    fetch: guardedFetch(guard, timeoutMs, onBodyError),
    requestInit: { headers },
    // One attempt: a dropped GET stream is not worth waiting for within one operation.
    reconnectionOptions: { maxRetries: 0, initialReconnectionDelay: 1_000, maxReconnectionDelay: 1_000, reconnectionDelayGrowFactor: 1 },
  });
  const client = new Client({ name: 'agent-api', version: '0.1.0' }, { capabilities: {} });
  // Errors the SDK reports on the side are either surfaced above or harmless; never logged
  // (they may quote an answer).
  client.onerror = () => undefined;
  const options: RequestOptions = { signal: stop.signal, timeout: timeoutMs + 60_000 };
  const stopped = new Promise<never>((_, reject) => {
    const fail = () => reject(stop.signal.reason);
    if (stop.signal.aborted) fail();
    else stop.signal.addEventListener('abort', fail, { once: true });
  });
  stopped.catch(() => undefined);
  try {
    const running = (async () => {
      await client.connect(transport, options);
      return work(client, options, redact);
    })();
    running.catch(() => undefined);
    return await Promise.race([running, stopped]);
  } catch (err) {
    if (stop.signal.reason === TIMEOUT) throw new McpFailed(redact(`The MCP server '${label}' did not answer within ${seconds(timeoutMs)}.`), 'timeout');
    if (stop.signal.reason === ABORTED) throw new McpFailed(redact(`The request to the MCP server '${label}' was cancelled.`), 'aborted');
    if (broken) throw broken;
    throw failure(err, label, timeoutMs, redact);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    closing = true;
    await close(client, transport, stop.signal.reason === ABORTED);
  }
}

/** Ends the session (DELETE, when the server gave one) and drops the connection; failures ignored. */
async function close(client: Client, transport: StreamableHTTPClientTransport, hurry: boolean): Promise<void> {
  if (!hurry && transport.sessionId !== undefined) {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([transport.terminateSession().catch(() => undefined), new Promise((r) => (timer = setTimeout(r, CLOSE_GRACE_MS)))]);
    clearTimeout(timer);
  }
  await client.close().catch(() => undefined);
}

/** The SDK's fetch: every request through the guard, answers streaming, bodies watched for failures. */
function guardedFetch(guard: OutboundGuard, timeoutMs: number, onBodyError: (err: unknown, method: string) => void): FetchLike {
  return async (input, init) => {
    const method = init?.method ?? 'GET';
    const body = init?.body;
    if (body != null && typeof body !== 'string' && !(body instanceof Uint8Array)) throw new TypeError('Unsupported request body.');
    const res = await guard.request(input, {
      method,
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      ...(body != null ? { body } : {}),
      ...(init?.signal ? { signal: init.signal } : {}),
      timeoutMs,
      maxBytes: MAX_ANSWER_BYTES,
    });
    if (!res.body) return res;
    const reader = res.body.getReader();
    let cancelled = false;
    const watched = new ReadableStream<Uint8Array>({
      async pull(controller) {
        try {
          const { done, value } = await reader.read();
          if (cancelled) return;
          if (done) controller.close();
          else controller.enqueue(value);
        } catch (err) {
          if (cancelled) return;
          onBodyError(err, method);
          controller.error(err);
        }
      },
      cancel: (reason) => {
        cancelled = true;
        return reader.cancel(reason);
      },
    });
    const out = new Response(watched, { status: res.status, statusText: res.statusText, headers: res.headers });
    Object.defineProperty(out, 'url', { value: res.url });
    return out;
  };
}

/** The headers for the server: checked, names lower-cased, the token as a bearer credential. */
function requestHeaders(server: McpServer): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(server.headers ?? {})) {
    // Neither name nor value quoted: an invalid one may still be a secret.
    if (!TOKEN.test(name) || typeof value !== 'string' || !HEADER_VALUE.test(value)) {
      throw new McpFailed(`A header given for the MCP server '${server.label}' is not a valid HTTP header.`, 'invalid');
    }
    if (!TRANSPORT_HEADERS.has(name.toLowerCase())) headers[name.toLowerCase()] = value;
  }
  if (server.authorization !== undefined) {
    const token = server.authorization.replace(/^bearer\s+/i, '');
    if (!token || !HEADER_VALUE.test(token)) throw new McpFailed(`The authorization given for the MCP server '${server.label}' is not a valid token.`, 'invalid');
    headers.authorization = `Bearer ${token}`;
  }
  return headers;
}

/** Blanks every header value and the token out of a text (values this short are no secrets, and blanking them would garble the text). */
function redactor(server: McpServer): (text: string) => string {
  const secrets = [...Object.values(server.headers ?? {}), server.authorization ?? '', (server.authorization ?? '').replace(/^bearer\s+/i, '')]
    .filter((v) => typeof v === 'string' && v.trim().length >= 4)
    .sort((a, b) => b.length - a.length);
  if (secrets.length === 0) return (text) => text;
  return (text) => secrets.reduce((t, secret) => t.split(secret).join('[redacted]'), text);
}

/** Any other failure, said plainly: the SDK's messages are not passed on (they may quote an answer or a header). */
function failure(err: unknown, label: string, timeoutMs: number, redact: (text: string) => string): McpFailed {
  if (err instanceof McpFailed) return err;
  const tooLarge = findCause(err, OutboundTooLarge);
  if (tooLarge) return new McpFailed(redact(`The MCP server '${label}' sent an answer that was refused: ${tooLarge.message}`), 'protocol');
  const refused = findCause(err, OutboundRefused);
  if (refused) return new McpFailed(redact(`The MCP server '${label}' is not reachable: ${refused.message}`), 'unreachable');
  if (err instanceof StreamableHTTPError && err.code !== undefined && err.code > 0) {
    if (err.code === 401 || err.code === 403) return new McpFailed(redact(`The MCP server '${label}' refused the request (${err.code}).`), 'refused', err.code);
    return new McpFailed(redact(`The MCP server '${label}' answered with HTTP status ${err.code}.`), 'http', err.code);
  }
  if (findTimeout(err)) return new McpFailed(redact(`The MCP server '${label}' did not answer within ${seconds(timeoutMs)}.`), 'timeout');
  const network = networkReason(err);
  if (network) return new McpFailed(redact(`The MCP server '${label}' is not reachable: ${network}.`), 'unreachable');
  if (err instanceof McpError) return new McpFailed(redact(`The MCP server '${label}' answered with an error: ${rpcMessage(err)}`), 'protocol');
  return new McpFailed(redact(`The MCP server '${label}' did not answer as an MCP server does.`), 'protocol');
}

function findCause<E extends Error>(err: unknown, type: new (...args: never[]) => E): E | undefined {
  let e: unknown = err;
  for (let i = 0; i < 6 && e instanceof Error; i++) {
    if (e instanceof type) return e;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

function findTimeout(err: unknown): boolean {
  let e: unknown = err;
  for (let i = 0; i < 6 && e instanceof Error; i++) {
    if (e.name === 'TimeoutError') return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}

/** A connection failure in a few words, from the system's error code (never its message, which may quote the request). */
function networkReason(err: unknown): string | undefined {
  const reasons: Record<string, string> = {
    ECONNREFUSED: 'the connection was refused',
    ECONNRESET: 'the connection was reset',
    EPIPE: 'the connection was reset',
    ETIMEDOUT: 'the connection timed out',
    UND_ERR_CONNECT_TIMEOUT: 'the connection timed out',
    UND_ERR_SOCKET: 'the connection failed',
    UND_ERR_CLOSED: 'the connection was closed',
    EHOSTUNREACH: 'the host is unreachable',
    ENETUNREACH: 'the network is unreachable',
    ENOTFOUND: 'the name could not be resolved',
    EAI_AGAIN: 'the name could not be resolved',
  };
  let e: unknown = err;
  for (let i = 0; i < 6 && e instanceof Error; i++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') {
      if (reasons[code]) return reasons[code];
      if (/CERT|TLS|SSL|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) return 'its TLS certificate was not accepted';
    }
    e = (e as { cause?: unknown }).cause;
  }
  if (err instanceof TypeError && err.message === 'fetch failed') return 'the connection failed';
  return undefined;
}

/** A JSON-RPC error's own message, without the SDK's "MCP error <code>: " prefix. */
function rpcMessage(err: McpError): string {
  return err.message.replace(/^MCP error -?\d+: /, '') || `error ${err.code}`;
}

const seconds = (ms: number) => `${Number((ms / 1000).toFixed(3))} s`;

function toolInfo(tool: Tool, redact: (text: string) => string): McpToolInfo {
  return {
    name: tool.name,
    // A server may quote what it was sent: its descriptions are blanked like its errors.
    ...(typeof tool.description === 'string' ? { description: capped(redact(tool.description), 4_000) } : {}),
    input_schema: tool.inputSchema,
    annotations: tool.annotations ?? null,
  };
}

/** The result's content as one text: text joined, anything else in a line saying what it was. */
function contentText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((c): string => {
    switch (c.type) {
      case 'text':
        return c.text;
      case 'image':
      case 'audio':
        return `[${c.type} content: ${c.mimeType}, not shown]`;
      case 'resource_link':
        return `[resource: ${c.uri}${c.name ? ` (${c.name})` : ''}]`;
      case 'resource':
        return 'text' in c.resource && typeof c.resource.text === 'string' ? c.resource.text : `[resource: ${c.resource.uri}${c.resource.mimeType ? `, ${c.resource.mimeType}` : ''}, binary, not shown]`;
      default:
        return `[${(c as { type: string }).type} content, not shown]`;
    }
  });
  // A tool with only structured output still says something.
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent);
  return parts.join('\n');
}

function capped(text: string, maxChars: number): string {
  if (text.length <= maxChars) return text;
  return `${text.slice(0, maxChars)}\n[output truncated: ${text.length} characters, the first ${maxChars} shown]`;
}
