// Step 3 as a Fastify hook: the presented secret, then pipeline/authenticate.ts.
import { invalidApiKey } from '../errors.ts';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { authenticateCall } from '../pipeline/authenticate.ts';
import type { Services } from '../services.ts';

/** The secret from `Authorization: Bearer` (or `x-api-key`, as messages-style clients send it). */
export function presentedSecret(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  const apiKey = request.headers['x-api-key'];
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    const bearer = m ? m[1]! : null;
    // Two different keys in one request: which one the caller meant is unknowable.
    if (typeof apiKey === 'string' && apiKey.length > 0 && apiKey !== bearer) throw invalidApiKey('The x-api-key and Authorization headers name different keys: send one.');
    return bearer;
  }
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : null;
}

export function authenticateStep(services: Services) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (!request.state.route || request.state.route.auth === 'none') return;
    await authenticateCall(services, request.state, presentedSecret(request));
  };
}
