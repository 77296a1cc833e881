// Request bodies of the admin API (the workspace's keys tab).
import { z } from 'zod';
import { isValidAllowEntry } from '../../keys/ip-allowlist.ts';
import { keyLimitSchema } from '../../keys/key-limits.ts';
import { PERMISSIONS } from '../../keys/permissions.ts';
import { MODEL_IDS } from '../../contract/models.ts';
import { creditsAmount } from '../../accounts/money.ts';
import { storedText } from '../../contract/fields.ts';

export const createAccountBody = z.strictObject({
  // Names stand in for ids wherever an account is named, so they cannot look like one.
  name: storedText(200).pipe(z.string().min(1)).refine((n) => !n.startsWith('acct_'), 'must not start with acct_ (account ids do)'),
  credits: creditsAmount.min(0, 'must not be negative').default(0),
});

export const addCreditsBody = z.strictObject({
  amount: creditsAmount.refine((n) => n !== 0, 'amount must not be 0'),
  reason: storedText(200).optional(),
  /** A debit that may take the available credits below zero (e.g. undoing a mistaken grant). */
  correction: z.boolean().optional(),
});

const permissionsSchema = z.strictObject(Object.fromEntries(PERMISSIONS.map((p) => [p, z.boolean().optional()])) as Record<(typeof PERMISSIONS)[number], z.ZodOptional<z.ZodBoolean>>);

const keyFields = {
  name: storedText(200).pipe(z.string().min(1)),
  permissions: permissionsSchema.optional(),
  /** The model ids the key may use (any of SPEC "Models"), on every endpoint that takes a model; null: all. */
  models: z.array(z.enum(MODEL_IDS)).min(1).max(MODEL_IDS.length * 4).nullable().optional(),
  ip_allowlist: z
    .array(z.string().refine(isValidAllowEntry, 'must be an IP address or CIDR range'))
    .min(1)
    .max(256)
    .nullable()
    .optional(),
  rpm: z.number().int().min(1).max(1_000_000_000).nullable().optional(),
  /** caps max_tokens of every request made with the key */
  max_output_tokens: z.number().int().min(1).max(1_000_000).nullable().optional(),
  limits: z.array(keyLimitSchema).max(32).optional(),
  paused: z.boolean().optional(),
  /** Unix seconds */
  expires_at: z.number().int().positive().max(253_402_300_799, 'must be before the year 10000').nullable().optional(),
};

/** `account_id`: the account's id or its name. */
export const createKeyBody = z.strictObject({ account_id: storedText(200).pipe(z.string().min(1)), ...keyFields });
export const updateKeyBody = z.strictObject({ ...keyFields, name: keyFields.name.optional() });

export const listKeysQuery = z.object({ account_id: z.string().optional() });

export const activityQuery = z.object({
  key_id: z.string().optional(),
  account_id: z.string().optional(),
  client_request_id: z.string().optional(),
  request_id: z.string().optional(),
  limit: z.coerce.number().int().min(1).max(1000).default(100),
  after: z.string().optional(),
  order: z.enum(['asc', 'desc']).default('desc'),
});
