// Where a root is reached from outside, for what an answer publishes (an OpenAPI
// document's server, a batch's results_url): AGENT_API_PUBLIC_BASE_URL is the /v1 base,
// so /v1 publishes it as it is and another root takes its place beside /v1 (the base less
// its /v1, then the root's prefix); unset, the request's own origin (Host, and a trusted
// proxy's forwarded headers) and the prefix.
import type { FastifyRequest } from 'fastify';

export function rootUrl(publicBaseUrl: string | undefined, request: FastifyRequest, prefix: string): string {
  if (publicBaseUrl !== undefined) return prefix === '/v1' ? publicBaseUrl : `${publicBaseUrl.replace(/\/v1$/, '')}${prefix}`;
  return `${request.protocol}://${request.host}${prefix}`;
}
