// Credits and dollars travel as decimal numbers and are stored as integer micro-units.
import { z } from 'zod';

export const toMicro = (value: number): number => Math.round(value * 1_000_000);
export const fromMicro = (micro: number): number => Math.round(micro) / 1_000_000;

/**
 * The largest balance an account may hold, and the largest single grant: its micro-units
 * stay far inside the integers a double holds exactly (2^53 ≈ 9e15).
 */
export const MAX_CREDITS = 1_000_000_000;
export const MAX_MICRO = MAX_CREDITS * 1_000_000;

/** At most six decimals: a whole number of micro-credits (1e-7 would be recorded as 0). */
const wholeMicro = (n: number) => Number(n.toFixed(6)) === n;

/** A credit amount as the admin API and the CLI take it: finite, whole micro-credits, within ±MAX_CREDITS. */
export const creditsAmount = z
  .number()
  .finite()
  .min(-MAX_CREDITS, `must be at least -${MAX_CREDITS}`)
  .max(MAX_CREDITS, `must be at most ${MAX_CREDITS}`)
  .refine(wholeMicro, 'must have at most 6 decimal places (whole micro-credits)');

/** Why a grant or debit was refused; the callers name the field. */
export class CreditsRefused extends Error {
  override name = 'CreditsRefused';
}
