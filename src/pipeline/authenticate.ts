// Step 3: authenticate. Missing, wrong, revoked or expired keys are 401; a paused key,
// an address outside the allowlist or a switch that is off is 403 (SPEC "Authentication").
import { gatewayNotAllowed, invalidApiKey, modelNotAllowed } from '../errors.ts';
import { ipAllowed } from '../keys/ip-allowlist.ts';
import type { KeyRecord } from '../keys/keys-service.ts';
import type { Services } from '../services.ts';
import type { Call } from './call.ts';

/** Checks the presented secret for the call's route; sets `call.key` for key routes. */
export async function authenticateCall(services: Services, call: Call, secret: string | null): Promise<void> {
  const route = call.route;
  if (!route || route.auth === 'none') return;
  if (route.auth === 'admin') {
    // AGENT_API_ADMIN_TOKEN, else the stored token (src/keys/admin-tokens.ts), compared in constant time.
    const verdict = await services.adminTokens.verify(secret);
    if (verdict === 'off') {
      throw invalidApiKey('The admin API is disabled: set AGENT_API_ADMIN_TOKEN, or run `node bin/agent-api.js admin-token rotate`, to enable it.');
    }
    if (verdict === 'wrong') throw invalidApiKey('Invalid admin token.');
    return;
  }
  if (!secret) throw invalidApiKey("You didn't provide an API key. Send it as 'Authorization: Bearer <API_KEY>'.");
  const key = await services.keys.authenticate(secret);
  if (!key) throw invalidApiKey();
  admitKey(services, call, key);
}

/**
 * The key's own state, for a key already looked up (a batch line runs with the key that
 * created the batch, re-read when the line runs: revoked or paused since is refused).
 */
export function admitKey(services: Services, call: Call, key: KeyRecord, now = Date.now()): void {
  if (key.revokedAt !== null) throw invalidApiKey('This API key has been revoked.');
  if (key.expiresAt !== null && key.expiresAt <= now) throw invalidApiKey('This API key has expired.');
  call.key = key;
  if (key.paused) throw modelNotAllowed('This API key is paused.');
  if (key.ipRanges && !ipAllowed(call.ip, key.ipRanges)) {
    throw modelNotAllowed(`Requests from ${call.ip} are not allowed for this API key.`);
  }
  // A root's own switch first (the gateway's): without it nothing under the root is answered.
  const rootSwitch = call.route?.root?.requires;
  if (rootSwitch && !key.permissions[rootSwitch]) {
    throw gatewayNotAllowed(`This API key does not have the '${rootSwitch}' permission, which every request to ${call.route!.root!.prefix} needs. Ask the operator to turn it on.`);
  }
  const permission = call.route?.contract?.permission;
  if (permission && !key.permissions[permission]) {
    throw modelNotAllowed(`This API key does not have the '${permission}' permission.`);
  }
  services.keys.touch(key, now);
}
