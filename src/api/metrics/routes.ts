// GET /metrics: Prometheus text, outside /v1 (not part of the OpenAI contract, so not in
// /v1/openapi.json). Open unless AGENT_API_METRICS_TOKEN is set; then that bearer token.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { presentedSecret } from '../../http/authenticate.ts';
import { invalidApiKey } from '../../errors.ts';
import type { Services } from '../../services.ts';

const digest = (s: string) => createHash('sha256').update(s).digest();

export function metricsRoutes(app: FastifyInstance, services: Services): void {
  const tokenDigest = services.config.metricsToken ? digest(services.config.metricsToken) : null;
  app.get('/metrics', async (request, reply) => {
    if (tokenDigest) {
      const secret = presentedSecret(request);
      // Digests compare in the same time whatever the presented token's length.
      if (!secret || !timingSafeEqual(digest(secret), tokenDigest)) throw invalidApiKey('Invalid metrics token.');
    }
    const text = await services.metrics.render();
    return reply.type(services.metrics.contentType).send(text);
  });
}
