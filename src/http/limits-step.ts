// Step 4 as a Fastify hook: pipeline/admit.ts; rate-limit headers on every
// authenticated response, a refused one included. A preParsing hook: a request its key
// may not make now is refused before its body is read, and one on an endpoint that runs
// a model, from an account without credits, before a large body is parsed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { admitCall, admitCredits } from '../pipeline/admit.ts';
import type { Services } from '../services.ts';
import { mayBeLarge } from './json-body.ts';

export function limitsStep(services: Services) {
  return async function applyLimits(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const call = request.state;
    if (!call.key) return;
    try {
      await admitCall(services, call);
      // Small bodies cost little to parse, and the reservation refuses them as surely: no extra read on the hot path.
      if (call.route?.contract?.billable && mayBeLarge(request.headers)) await admitCredits(services, call);
    } finally {
      reply.headers(call.headers);
    }
    // Finished already (the client went away during the earlier steps): no handler runs.
    if (request.state.done) reply.hijack();
  };
}
