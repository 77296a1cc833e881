// Families that are not offered answer 404 unsupported_endpoint on every method and
// sub-path, before any authentication work.
import type { FastifyInstance } from 'fastify';
import { UNSUPPORTED_FAMILIES } from '../../contract/unsupported.ts';
import { unsupportedEndpoint } from '../../errors.ts';
import type { RouteConfig } from '../../http/request-state.ts';

const ALL_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'] as const;

export function unsupportedRoutes(app: FastifyInstance, prefix = '/v1'): void {
  for (const family of UNSUPPORTED_FAMILIES) {
    const config: RouteConfig = { auth: 'none', endpoint: `${prefix}/${family}` };
    for (const url of [`${prefix}/${family}`, `${prefix}/${family}/*`]) {
      app.route({
        method: [...ALL_METHODS],
        url,
        config: { agent: config },
        // Answer in onRequest, before the body is read: a malformed body must not turn the 404 into a 400.
        onRequest: async (request) => {
          throw unsupportedEndpoint(request.method, request.url.split('?')[0]!);
        },
        handler: async () => undefined,
      });
    }
  }
}
