// A provider's cost that arrives after the response (aggregators can report the final
// cost minutes later): the run's ledger entry and its call's activity row (the sum of
// the call's runs) are corrected.
import type { Services } from '../services.ts';
import { microCreditsFor } from './pricing.ts';

/** `runId`: the run's (a call's first run has its request id). Returns false when no settled run has this id. */
export async function applyLateCost(services: Pick<Services, 'ledger' | 'activity' | 'config'>, runId: string, usd: number): Promise<boolean> {
  const call = await services.ledger.correct(runId, microCreditsFor(usd, services.config.creditsPerUsd), Math.round(usd * 1_000_000));
  if (call === null) return false;
  await services.activity.update(call.requestId, { credits_settled: call.charged, cost_usd: call.costUsd });
  return true;
}
