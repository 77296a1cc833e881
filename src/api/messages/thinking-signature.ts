// A thinking block's `signature` binds its text to the account it was made for: an HMAC
// under the service's sealing key (AGENT_API_SECRET, else the one kept in the database).
// A client sends thinking back to continue a turn; a block whose text was changed, or
// that another account or service made, is refused instead of being read as ours.
import { createHmac, timingSafeEqual } from 'node:crypto';

const VERSION = 'as1';

export class ThinkingSignatures {
  private readonly key: Buffer;

  constructor(sealingKey: Buffer) {
    // Its own key, derived: a signature can never be mistaken for another use of the sealing key.
    this.key = createHmac('sha256', sealingKey).update('agent-api messages thinking signature').digest();
  }

  sign(accountId: string, thinking: string): string {
    return `${VERSION}${this.mac(accountId, thinking).toString('base64url')}`;
  }

  verify(accountId: string, thinking: string, signature: string): boolean {
    if (typeof signature !== 'string' || !signature.startsWith(VERSION)) return false;
    const given = Buffer.from(signature.slice(VERSION.length), 'base64url');
    const expected = this.mac(accountId, thinking);
    return given.length === expected.length && timingSafeEqual(given, expected);
  }

  private mac(accountId: string, thinking: string): Buffer {
    return createHmac('sha256', this.key).update(accountId).update('\0').update(thinking).digest();
  }
}
