// The one error type and the catalogue of SPEC "Errors". Errors are thrown where they
// happen and rendered in one place (http/error-handler.ts) as
// {error: {message, type, param, code}}.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    readonly code: string,
    message: string,
    readonly param: string | null = null,
    /** Extra response headers (e.g. Allow on 405). */
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  toBody() {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }
}

/** Every error code the compatible API answers, with its status and type (published in /capabilities). */
export const ERROR_CATALOGUE = [
  { status: 400, type: 'invalid_request_error', code: 'invalid_request', condition: 'request invalid' },
  {
    status: 400,
    type: 'invalid_request_error',
    code: 'unsupported_parameter',
    condition: "a known field the service cannot honor, or a value outside a limited field's allowed values; field in param",
  },
  { status: 400, type: 'invalid_request_error', code: 'response_not_cancellable', condition: 'cancel of a foreground or finished response' },
  { status: 401, type: 'invalid_request_error', code: 'invalid_api_key', condition: 'key missing, wrong, revoked or expired' },
  { status: 403, type: 'permission_error', code: 'model_not_allowed', condition: 'key paused, model or permission not allowed, IP not allowed' },
  { status: 403, type: 'permission_error', code: 'gateway_not_allowed', condition: 'gateway key without the AI gateway switch' },
  { status: 404, type: 'invalid_request_error', code: 'model_not_found', condition: 'unknown model, unknown stored object or endpoint' },
  { status: 404, type: 'invalid_request_error', code: 'unsupported_endpoint', condition: 'an endpoint family that is not offered' },
  { status: 405, type: 'invalid_request_error', code: 'method_not_allowed', condition: 'GET /responses without a WebSocket upgrade' },
  {
    status: 429,
    type: 'insufficient_quota',
    code: 'insufficient_quota',
    condition: 'a rate, concurrency or usage limit reached, or the account is out of credits',
  },
  { status: 500, type: 'server_error', code: 'server_error', condition: 'an unexpected failure inside the service' },
  { status: 502, type: 'server_error', code: 'upstream_error', condition: 'the model provider failed to answer' },
  { status: 503, type: 'server_error', code: 'service_unavailable', condition: 'the service is shutting down or its database is unreachable' },
] as const;

export const invalidRequest = (message: string, param: string | null = null) =>
  new ApiError(400, 'invalid_request_error', 'invalid_request', message, param);

export const unsupportedParameter = (param: string, message?: string) =>
  new ApiError(
    400,
    'invalid_request_error',
    'unsupported_parameter',
    message ?? `Unsupported parameter: '${param}' is not supported by this service.`,
    param,
  );

export const invalidApiKey = (message = 'Invalid API key provided.') =>
  new ApiError(401, 'invalid_request_error', 'invalid_api_key', message);

export const modelNotAllowed = (message: string, param: string | null = null) =>
  new ApiError(403, 'permission_error', 'model_not_allowed', message, param);

export const notFound = (message: string, param: string | null = null) =>
  new ApiError(404, 'invalid_request_error', 'model_not_found', message, param);

export const unsupportedEndpoint = (method: string, path: string) =>
  new ApiError(404, 'invalid_request_error', 'unsupported_endpoint', `${method} ${path} is not offered by this service.`);

export const methodNotAllowed = (message: string, allow: string) =>
  new ApiError(405, 'invalid_request_error', 'method_not_allowed', message, null, { allow });

export const insufficientQuota = (message: string) => new ApiError(429, 'insufficient_quota', 'insufficient_quota', message);

export const upstreamError = (message: string) => new ApiError(502, 'server_error', 'upstream_error', message);

export const serverError = (message = 'The server had an error while processing your request.') =>
  new ApiError(500, 'server_error', 'server_error', message);

export const serviceUnavailable = (message: string) => new ApiError(503, 'server_error', 'service_unavailable', message);
