// Visitor tokens (docs/api.md#visitor-tokens): a page cannot be trusted to say who its visitor is,
// so the customer's backend, with a secret key, asks for a short-lived token naming the visitor
// and hands it to the page (`<likeness-avatar visitor-token>`); an embed start with it has that
// visitor and their memory, one without it has neither. A JWT (HS256) signed with a key derived
// from the admin token, which every replica has; it names its account, so another account's key
// cannot use it. It may do nothing else: it reads no memory and starts nothing on its own.
import { createHmac } from 'node:crypto';
import { errors, jwtVerify, SignJWT } from 'jose';
import type { MemoryScope } from '../contract/index.ts';
import { MEMORY_SCOPES } from '../contract/index.ts';

const AUDIENCE = 'likeness:embed';
const ISSUER = 'likeness';

export interface VisitorClaim {
  accountId: string;
  visitorId: string;
  memoryScope: MemoryScope;
}

export type VisitorTokenCheck =
  | { ok: true; claim: VisitorClaim }
  | { ok: false; problem: 'expired' | 'invalid' | 'other_account' };

export class VisitorTokens {
  readonly #key: Uint8Array;

  constructor(adminToken: string) {
    this.#key = new Uint8Array(createHmac('sha256', adminToken).update('likeness visitor tokens v1').digest());
  }

  async issue(claim: VisitorClaim, ttlSeconds: number, now = new Date()): Promise<{ token: string; expiresAt: Date }> {
    const issuedAt = Math.floor(now.getTime() / 1000);
    const expiresAt = new Date((issuedAt + ttlSeconds) * 1000);
    const token = await new SignJWT({ acc: claim.accountId, scope: claim.memoryScope })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(claim.visitorId)
      .setAudience(AUDIENCE)
      .setIssuer(ISSUER)
      .setIssuedAt(issuedAt)
      .setExpirationTime(issuedAt + ttlSeconds)
      .sign(this.#key);
    return { token, expiresAt };
  }

  /** The token's visitor, when it is ours, unexpired, and `accountId`'s. */
  async check(token: string, accountId: string): Promise<VisitorTokenCheck> {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        audience: AUDIENCE,
        issuer: ISSUER,
      });
      const scope = (MEMORY_SCOPES as readonly unknown[]).includes(payload.scope)
        ? (payload.scope as MemoryScope)
        : undefined;
      if (typeof payload.sub !== 'string' || typeof payload.acc !== 'string' || !scope)
        return { ok: false, problem: 'invalid' };
      if (payload.acc !== accountId) return { ok: false, problem: 'other_account' };
      return { ok: true, claim: { accountId, visitorId: payload.sub, memoryScope: scope } };
    } catch (error) {
      return { ok: false, problem: error instanceof errors.JWTExpired ? 'expired' : 'invalid' };
    }
  }
}
