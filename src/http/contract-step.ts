// Step 5 as a Fastify hook: pipeline/contract.ts on the parsed body, query and path
// parameters; the headers it decided (ignored fields) go on the reply, errors included.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { checkCall } from '../pipeline/contract.ts';

export async function contractStep(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const call = request.state;
  if (!call.route?.contract) return;
  try {
    checkCall(call, { body: request.body, query: request.query as Record<string, unknown>, params: request.params as Record<string, string> });
  } finally {
    reply.headers(call.headers);
  }
}
