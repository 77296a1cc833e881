// The one error type and the catalogue of SPEC "Errors": each entry once, with the
// factory that makes it. Errors are thrown where they happen, by any layer (contract,
// credits, providers, api), and rendered in one place (http/error-handler.ts) as
// {error: {message, type, param, code}}. No transport is imported here.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers (e.g. Allow on 405). */
    readonly headers?: Record<string, string>,
    /** The catalogue entry it was made from: another root may answer it with its own status (the messages surface's 402). */
    readonly kind: string = 'custom',
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

interface Entry {
  readonly status: number;
  readonly type: string;
  readonly code: string;
  readonly condition: string;
}

const entry = (status: number, type: string, code: string, condition: string): Entry => ({ status, type, code, condition });
const make = (e: Entry, message: string, param: string | null = null, headers?: Record<string, string>) =>
  new ApiError(e.status, e.type, e.code, message, param, headers, KIND.get(e));

const INVALID = 'invalid_request_error';
const CATALOGUE = {
  invalidRequest: entry(400, INVALID, 'invalid_request', 'request invalid'),
  unsupportedParameter: entry(400, INVALID, 'unsupported_parameter', "a known field the service cannot honor, or a value outside a limited field's allowed values; field in param"),
  responseNotCancellable: entry(400, INVALID, 'response_not_cancellable', 'cancel of a foreground or finished response'),
  contentFlagged: entry(400, INVALID, 'content_flagged', "the key moderates its requests (its Moderate requests switch) and an input was flagged; param names the input, the message the categories"),
  invalidApiKey: entry(401, INVALID, 'invalid_api_key', 'key missing, wrong, revoked or expired'),
  modelNotAllowed: entry(403, 'permission_error', 'model_not_allowed', 'key paused, model or permission not allowed, IP not allowed'),
  gatewayNotAllowed: entry(403, 'permission_error', 'gateway_not_allowed', 'gateway key without the AI gateway switch'),
  notFound: entry(404, INVALID, 'model_not_found', 'unknown model, unknown stored object or endpoint'),
  unsupportedEndpoint: entry(404, INVALID, 'unsupported_endpoint', 'an endpoint family that is not offered'),
  methodNotAllowed: entry(405, INVALID, 'method_not_allowed', 'GET /responses without a WebSocket upgrade'),
  requestTimeout: entry(408, INVALID, 'invalid_request', 'the request did not arrive in time'),
  uriTooLong: entry(414, INVALID, 'invalid_request', 'a path parameter longer than the server accepts'),
  expectationFailed: entry(417, INVALID, 'invalid_request', 'an Expect header other than 100-continue'),
  headersTooLarge: entry(431, INVALID, 'invalid_request', 'the request line and headers over 16 KB'),
  insufficientQuota: entry(429, 'insufficient_quota', 'insufficient_quota', 'a rate, concurrency or usage limit reached, or the account is out of credits'),
  // The same answer on /v1, told apart for surfaces that answer them differently (the messages surface: 429 and 402).
  rateLimited: entry(429, 'insufficient_quota', 'insufficient_quota', "the key's requests per minute reached"),
  tooManyConcurrent: entry(429, 'insufficient_quota', 'insufficient_quota', "the account's concurrency limit reached"),
  usageLimitReached: entry(429, 'insufficient_quota', 'insufficient_quota', "a key's usage limit (requests, tokens, credits or spend per period) reached"),
  outOfCredits: entry(429, 'insufficient_quota', 'insufficient_quota', 'the account cannot cover the reservation'),
  bodyTooLarge: entry(400, INVALID, 'invalid_request', 'the request body is larger than the limit'),
  serverError: entry(500, 'server_error', 'server_error', 'an unexpected failure inside the service'),
  upstreamError: entry(502, 'server_error', 'upstream_error', 'the model provider failed to answer'),
  serviceUnavailable: entry(503, 'server_error', 'service_unavailable', 'the service is shutting down, its database, Redis (when limits are shared there) or sandbox is unavailable, it has too many large bodies waiting to be parsed or images waiting to be moderated, or an engine is not installed (the message names what to install) or has too many requests waiting'),
} as const;

const KIND = new Map<Entry, string>(Object.entries(CATALOGUE).map(([name, e]) => [e, name]));

/** Every error the compatible API answers, with its status and type (published in /capabilities). */
export const ERROR_CATALOGUE: readonly Entry[] = Object.values(CATALOGUE);

export const invalidRequest = (message: string, param: string | null = null) => make(CATALOGUE.invalidRequest, message, param);
export const unsupportedParameter = (param: string, message?: string) =>
  make(CATALOGUE.unsupportedParameter, message ?? `Unsupported parameter: '${param}' is not supported by this service.`, param);
export const responseNotCancellable = (message: string) => make(CATALOGUE.responseNotCancellable, message);
export const contentFlagged = (message: string, param: string) => make(CATALOGUE.contentFlagged, message, param);
export const invalidApiKey = (message = 'Invalid API key provided.') => make(CATALOGUE.invalidApiKey, message);
export const modelNotAllowed = (message: string, param: string | null = null) => make(CATALOGUE.modelNotAllowed, message, param);
export const gatewayNotAllowed = (message: string) => make(CATALOGUE.gatewayNotAllowed, message);
export const notFound = (message: string, param: string | null = null) => make(CATALOGUE.notFound, message, param);
export const unsupportedEndpoint = (method: string, path: string) => make(CATALOGUE.unsupportedEndpoint, `${method} ${path} is not offered by this service.`);
export const methodNotAllowed = (message: string, allow: string) => make(CATALOGUE.methodNotAllowed, message, null, { allow });
export const requestTimeout = (message: string) => make(CATALOGUE.requestTimeout, message);
export const uriTooLong = (message: string) => make(CATALOGUE.uriTooLong, message);
export const expectationFailed = (message: string) => make(CATALOGUE.expectationFailed, message);
export const headersTooLarge = (message: string) => make(CATALOGUE.headersTooLarge, message);
export const insufficientQuota = (message: string) => make(CATALOGUE.insufficientQuota, message);
export const rateLimited = (message: string, headers?: Record<string, string>) => make(CATALOGUE.rateLimited, message, null, headers);
export const tooManyConcurrent = (message: string) => make(CATALOGUE.tooManyConcurrent, message, null, { 'retry-after': '1' });
export const usageLimitReached = (message: string) => make(CATALOGUE.usageLimitReached, message);
export const outOfCredits = (message: string) => make(CATALOGUE.outOfCredits, message);
export const bodyTooLarge = (message: string) => make(CATALOGUE.bodyTooLarge, message);
export const upstreamError = (message: string) => make(CATALOGUE.upstreamError, message);
export const serverError = (message = 'The server had an error while processing your request.') => make(CATALOGUE.serverError, message);
export const serviceUnavailable = (message: string) => make(CATALOGUE.serviceUnavailable, message);
