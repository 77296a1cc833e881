// Liveness and readiness, without a key: /healthz answers while the process runs,
// /readyz only while the database answers, Redis too when REDIS_URL is set (a PING),
// and, when an upstream is configured, while the upstream does (a cached probe). A 503
// says what is down. Containers are reported too (whether code can run here, and why
// not) but do not make the service unready: everything else still works without them.
import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../../errors.ts';
import type { SandboxStatus } from '../../sandbox/types.ts';
import type { Services } from '../../services.ts';
import { CachedProbe } from './cached-probe.ts';

/** The upstream is asked at most this often (GET {base}/models). */
export const UPSTREAM_PROBE_TTL_MS = 15_000;
/** Longer than this, and the upstream counts as down. */
export const UPSTREAM_PROBE_TIMEOUT_MS = 2_000;

export function healthRoutes(app: FastifyInstance, services: Services, containers?: () => Promise<SandboxStatus>): void {
  const upstream = services.chat.upstream;
  const upstreamProbe = upstream ? new CachedProbe(() => upstream.probe(UPSTREAM_PROBE_TIMEOUT_MS), UPSTREAM_PROBE_TTL_MS) : undefined;

  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    const [databaseOk, probed, sandbox, limits] = await Promise.all([
      services.store.ping().then(
        () => true,
        () => false,
      ),
      upstreamProbe?.get(),
      containers?.(),
      services.limits.health(),
    ]);
    const database = { ok: databaseOk, kind: services.store.kind, ...(databaseOk ? {} : { error: 'not reachable' }) };
    const upstreamState =
      upstream && probed
        ? { ok: probed.ok, host: upstream.host, checked_at: new Date(probed.checkedAt).toISOString(), ...(probed.error ? { error: probed.error } : {}) }
        : undefined;
    // Redis holds the limits of every instance: without it requests are refused (or, by
    // choice, limited per instance), so a load balancer should send them elsewhere.
    const redis = limits && { ok: limits.ok, ...(limits.error ? { error: limits.error } : {}) };
    const down = [...(databaseOk ? [] : ['the database']), ...(redis && !redis.ok ? ['Redis'] : []), ...(upstreamState && !upstreamState.ok ? ['the upstream'] : [])];
    const containersState = sandbox && { ok: sandbox.available, ...(sandbox.available ? {} : { error: sandbox.reason ?? 'the sandbox cannot run' }) };
    const body = {
      status: down.length === 0 ? 'ready' : 'unavailable',
      database,
      ...(redis ? { redis } : {}),
      ...(upstreamState ? { upstream: upstreamState } : {}),
      ...(containersState ? { containers: containersState } : {}),
    };
    if (down.length === 0) return body;
    // The details, plus the error shape every other failure has.
    const error = serviceUnavailable(`Not ready: ${down.join(' and ')} ${down.length > 1 ? 'are' : 'is'} not answering.`);
    request.state.errorCode = error.code;
    return reply.code(503).send({ ...body, ...error.toBody() });
  });
}
