// Liveness and readiness, without a key: /healthz answers while the process runs,
// /readyz only while the database answers.
import type { FastifyInstance } from 'fastify';
import { serviceUnavailable } from '../../http/errors.ts';
import type { Services } from '../../services.ts';

export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async () => {
    try {
      await services.store.ping();
    } catch {
      throw serviceUnavailable('The database is not reachable.');
    }
    return { status: 'ready', database: services.store.kind };
  });
}
