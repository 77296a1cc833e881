// Step 5 as a Fastify hook: pipeline/admit.ts; rate-limit headers on every
// authenticated response, a refused one included.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { admitCall } from '../pipeline/admit.ts';
import type { Services } from '../services.ts';

export function limitsStep(services: Services) {
  return async function applyLimits(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (!request.state.key) return;
    try {
      await admitCall(services, request.state);
    } finally {
      reply.headers(request.state.headers);
    }
    // Finished already (the client went away during the earlier steps): no handler runs.
    if (request.state.done) reply.hijack();
  };
}
