// Roots as data (DESIGN "Roots"): each surface the process serves is a prefix with its
// endpoints' contract tables, its error shape (the body, and the status each catalogue
// entry takes there), its published documents, and whether its bodies are parsed. The
// router registers a root's endpoints, the error handler renders by the root a request
// is under, and each root publishes its own OpenAPI document: a new surface is a root
// declared here plus its handlers, not a second pipeline.
import type { ApiError } from '../errors.ts';
import { adminEndpoints } from './endpoints/admin.ts';
import { gatewayEndpoints } from './endpoints/gateway.ts';
import { messagesEndpoints } from './endpoints/messages.ts';
import type { Permission } from '../keys/permissions.ts';
import { ALL_ENDPOINTS } from './registry.ts';
import type { EndpointContract } from './types.ts';

type Json = Record<string, unknown>;

export interface ErrorShape {
  /** The status an error of the catalogue answers with under this root. */
  status(error: ApiError): number;
  /** The JSON body of an error answer; `requestId` is the answer's X-Request-Id. */
  body(error: ApiError, requestId: string): unknown;
  /** The body's JSON Schema, for the root's OpenAPI document. */
  readonly schema: Json;
}

export interface Root {
  /** Short name, for logs and the OpenAPI document. */
  readonly id: string;
  /** Where it is mounted, e.g. `/v1`. */
  readonly prefix: string;
  readonly title: string;
  readonly description: string;
  /** How its endpoints authenticate unless one says otherwise: an API key or the admin token. */
  readonly auth: 'key' | 'admin';
  /** Its endpoints' contract tables, offered or not yet (a handler registers what is offered). */
  readonly endpoints: readonly EndpointContract[];
  readonly errors: ErrorShape;
  /** `parsed`: JSON and multipart bodies go through the contract; `raw`: bodies are forwarded unparsed. */
  readonly bodies: 'parsed' | 'raw';
  /** Its documents (/openapi.json, and /capabilities where it has that contract) are answered without authentication. */
  readonly publicDocuments: boolean;
  /** A header that repeats X-Request-Id on every answer (the messages vendor's `request-id`, which its SDKs read). */
  readonly requestIdHeader?: string;
  /** Its own API version (SPEC "Versioning"), published in its OpenAPI document; the service's when absent. */
  readonly version?: string;
  /** A key switch every key-authenticated request under it needs, refused with `gatewayNotAllowed`-style 403 (authenticate step). */
  readonly requires?: Permission;
}

/** The reference API's error object: {error: {message, type, param, code}}. */
export const referenceErrors: ErrorShape = {
  status: (error) => error.status,
  body: (error) => error.toBody(),
  schema: {
    type: 'object',
    required: ['error'],
    properties: {
      error: {
        type: 'object',
        required: ['message', 'type', 'param', 'code'],
        properties: { message: { type: 'string' }, type: { type: 'string' }, param: { type: ['string', 'null'] }, code: { type: 'string' } },
      },
    },
  },
};

/** The compatible API. */
export const V1: Root = {
  id: 'v1',
  prefix: '/v1',
  title: 'agent-api',
  description: 'A self-hosted subset of the reference AI API. Fields outside the contract are refused or ignored as GET /capabilities describes.',
  auth: 'key',
  endpoints: ALL_ENDPOINTS,
  errors: referenceErrors,
  bodies: 'parsed',
  publicDocuments: true,
};

/** The operator's API: accounts, credits, keys and the activity log, under the admin token. */
export const ADMIN: Root = {
  id: 'admin',
  prefix: '/admin/v1',
  title: 'agent-api admin',
  description: "The operator's API: accounts and their credits, API keys and the activity log. Authenticated by the admin token. Unknown fields are refused.",
  auth: 'admin',
  endpoints: adminEndpoints,
  errors: referenceErrors,
  bodies: 'parsed',
  publicDocuments: false,
};

/**
 * The messages-style vendor's error object, `{type: "error", error: {type, message},
 * request_id}`, with its statuses: out of credits or over a key's usage limit is 402
 * `billing_error` (SPEC "Errors"), requests per minute and concurrency 429
 * `rate_limit_error`, a body over the limit 413, an engine or provider that cannot take
 * the request 529 `overloaded_error`.
 */
export const messagesErrors: ErrorShape = {
  status: (error) => messagesError(error).status,
  body: (error, requestId) => ({ type: 'error', error: { type: messagesError(error).type, message: messagesErrorMessage(error) }, request_id: requestId }),
  schema: {
    type: 'object',
    required: ['type', 'error', 'request_id'],
    properties: {
      type: { const: 'error' },
      error: {
        type: 'object',
        required: ['type', 'message'],
        properties: {
          type: {
            enum: ['invalid_request_error', 'authentication_error', 'billing_error', 'permission_error', 'not_found_error', 'request_too_large', 'rate_limit_error', 'api_error', 'overloaded_error'],
          },
          message: { type: 'string' },
        },
      },
      request_id: { type: 'string' },
    },
  },
};

/** The vendor's shape has no `param`: the field at fault leads the message, as the vendor words it (`messages.0.content: ...`). */
export function messagesErrorMessage(error: ApiError): string {
  return error.param && !error.message.includes(error.param) ? `${error.param}: ${error.message}` : error.message;
}

/** The status and vendor error type of one of our errors on the messages surface. */
export function messagesError(error: ApiError): { status: number; type: string } {
  switch (error.kind) {
    case 'usageLimitReached':
    case 'outOfCredits':
    case 'insufficientQuota':
      return { status: 402, type: 'billing_error' };
    case 'rateLimited':
    case 'tooManyConcurrent':
      return { status: 429, type: 'rate_limit_error' };
    case 'bodyTooLarge':
      return { status: 413, type: 'request_too_large' };
    case 'serviceUnavailable':
      return { status: 529, type: 'overloaded_error' };
  }
  const s = error.status;
  if (s === 401) return { status: s, type: 'authentication_error' };
  if (s === 403) return { status: s, type: 'permission_error' };
  if (s === 404) return { status: s, type: 'not_found_error' };
  if (s === 413) return { status: s, type: 'request_too_large' };
  if (s === 429) return { status: s, type: 'rate_limit_error' };
  if (s === 502 || s >= 500) return { status: s === 502 ? 500 : s, type: 'api_error' };
  return { status: s, type: 'invalid_request_error' };
}

/** The messages-style (Anthropic-compatible) surface: an SDK's base URL is `{host}/api/messages`. */
export const MESSAGES: Root = {
  id: 'messages',
  prefix: '/api/messages/v1',
  title: 'agent-api messages',
  description:
    'A messages-style compatible API on the same keys, limits, credits and activity log as /v1. The key goes in x-api-key or Authorization: Bearer; any anthropic-version and anthropic-beta are accepted. Fields outside the contract are named in X-Service-Ignored-Parameters.',
  auth: 'key',
  endpoints: messagesEndpoints,
  errors: messagesErrors,
  bodies: 'parsed',
  publicDocuments: true,
  requestIdHeader: 'request-id',
  // SPEC "Versioning" item 5.
  version: '1.0.0',
};

/**
 * The gateway (SPEC "Sibling surfaces"): forwards to an upstream aggregator, bodies
 * unparsed, under the key's AI gateway switch. Our own errors take /v1's shape; the
 * upstream's pass through as it sent them.
 */
export const GATEWAY: Root = {
  id: 'gateway',
  prefix: '/api/gateway/v1',
  title: 'agent-api gateway',
  description:
    "A gateway to an upstream model aggregator, on the same keys, limits, credits and activity log as /v1: requests are forwarded unchanged (bodies, streams and the upstream's errors byte for byte), credits are reserved before and settled to the upstream's reported cost. /key, /credits and /generation are answered by the service, in dollars. Needs the key's AI gateway switch (403 gateway_not_allowed).",
  auth: 'key',
  endpoints: gatewayEndpoints,
  errors: referenceErrors,
  bodies: 'raw',
  publicDocuments: true,
  requires: 'ai_gateway',
  // SPEC "Versioning" item 5.
  version: '1.0.0',
};

/** The root a URL is under among `roots` (longest prefix first), the compatible API's for one under none. */
export function rootOf(url: string, roots: readonly Root[]): Root {
  for (const root of roots) if (url === root.prefix || url.startsWith(`${root.prefix}/`) || url.startsWith(`${root.prefix}?`)) return root;
  return V1;
}
