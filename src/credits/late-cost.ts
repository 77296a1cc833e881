// A provider's cost that arrives after the response (aggregators can report the final
// cost minutes later): the same ledger entry and the same activity row are corrected.
import type { Services } from '../services.ts';
import { microCreditsFor } from './pricing.ts';

/** Returns false when no settled request has this id. */
export async function applyLateCost(services: Pick<Services, 'ledger' | 'activity' | 'config'>, requestId: string, usd: number): Promise<boolean> {
  const charged = await services.ledger.correct(requestId, microCreditsFor(usd, services.config.creditsPerUsd));
  if (charged === null) return false;
  await services.activity.update(requestId, { credits_settled: charged, cost_usd: Math.round(usd * 1_000_000) });
  return true;
}
