// A row read back right after a write (to answer with the object as stored) may be gone
// already: another request of the same account deleted it in between. That is the
// caller's 404, never a 500 from reading what is not there.
import type { ApiError } from '../errors.ts';

export function stillThere<T>(value: T | null | undefined, gone: () => ApiError): T {
  if (value === null || value === undefined) throw gone();
  return value;
}
