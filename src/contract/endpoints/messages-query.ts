// Query fields every messages-surface table shares: `?beta=true`, which the SDKs' beta
// methods add (Claude Code sends it), and the vendor's id paging.
import { z } from 'zod';
import { applied, noEffect } from '../fields.ts';
import type { FieldTable } from '../types.ts';

export const betaQuery = { beta: noEffect('the beta methods of the SDKs add it; the same endpoint answers', z.string().max(16)) } satisfies FieldTable;

/** `limit` (1 to 1,000; 20 unless given), `after_id` (the page after it), `before_id` (the page before it). */
export const idPageQuery = {
  before_id: applied(z.string().min(1).max(256)),
  after_id: applied(z.string().min(1).max(256)),
  limit: applied(z.coerce.number().int().min(1).max(1000)),
  ...betaQuery,
} satisfies FieldTable;
