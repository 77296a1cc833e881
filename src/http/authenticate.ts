// Step 3: authenticate. Missing, wrong, revoked or expired keys are 401; a paused key,
// an address outside the allowlist or a switch that is off is 403 (SPEC "Authentication").
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ipAllowed } from '../keys/ip-allowlist.ts';
import type { Services } from '../services.ts';
import { invalidApiKey, modelNotAllowed } from '../errors.ts';

/** The secret from `Authorization: Bearer` (or `x-api-key`, as messages-style clients send it). */
export function presentedSecret(request: FastifyRequest): string | null {
  const auth = request.headers.authorization;
  if (typeof auth === 'string') {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    return m ? m[1]! : null;
  }
  const apiKey = request.headers['x-api-key'];
  return typeof apiKey === 'string' && apiKey.length > 0 ? apiKey : null;
}

export function authenticateStep(services: Services) {
  return async function authenticate(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const route = request.routeOptions.config.agent;
    if (!route || route.auth === 'none') return;
    const secret = presentedSecret(request);

    if (route.auth === 'admin') {
      // AGENT_API_ADMIN_TOKEN, else the stored token (src/keys/admin-tokens.ts), compared in constant time.
      const verdict = await services.adminTokens.verify(secret);
      if (verdict === 'off') {
        throw invalidApiKey('The admin API is disabled: set AGENT_API_ADMIN_TOKEN, or run `npx agent-api admin-token rotate`, to enable it.');
      }
      if (verdict === 'wrong') throw invalidApiKey('Invalid admin token.');
      return;
    }

    if (!secret) {
      throw invalidApiKey("You didn't provide an API key. Send it as 'Authorization: Bearer <API_KEY>'.");
    }
    const key = await services.keys.authenticate(secret);
    const now = Date.now();
    if (!key) throw invalidApiKey();
    if (key.revokedAt !== null) throw invalidApiKey('This API key has been revoked.');
    if (key.expiresAt !== null && key.expiresAt <= now) throw invalidApiKey('This API key has expired.');
    request.state.key = key;
    if (key.paused) throw modelNotAllowed('This API key is paused.');
    if (key.ipRanges && !ipAllowed(request.ip, key.ipRanges)) {
      throw modelNotAllowed(`Requests from ${request.ip} are not allowed for this API key.`);
    }
    const permission = route.contract?.permission;
    if (permission && !key.permissions[permission]) {
      throw modelNotAllowed(`This API key does not have the '${permission}' permission.`);
    }
    services.keys.touch(key, now);
  };
}
