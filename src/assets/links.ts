// Links to stored assets (a person's face and voice): expiring and signed. A link is
// `<ASSETS_URL>/<key>?expires=<unix seconds>&signature=<HMAC-SHA256 of key and expiry>`, made
// afresh on every read of what carries it (an identity, a dispatch), and /assets/* serves it
// only while it has not expired and its signature holds. Deleting the file (an identity's
// delete, a retrain's replaced media) ends every link to it at once: nothing caches the bytes.
// Expiries sit on a grid of the lifetime (a link lives between one and two lifetimes), so two
// reads in one period give the same link and a browser can keep it.
import { createHmac, timingSafeEqual } from 'node:crypto';

export class AssetLinks {
  readonly #secret: Buffer;

  constructor(
    /** ASSETS_URL: where /assets/* is reached. */
    readonly baseUrl: string,
    /** The key links are signed with (derived from the admin token: every replica has it). */
    secret: string | Buffer,
    /** ASSET_URL_TTL: a link's shortest life, in seconds. */
    readonly ttlSeconds: number,
    private readonly now: () => number = Date.now,
  ) {
    this.#secret = Buffer.isBuffer(secret)
      ? secret
      : createHmac('sha256', secret).update('likeness asset links v1').digest();
  }

  /** The same links on another base (the one a client reached the service at: src/http/client-urls.ts). */
  withBase(baseUrl: string): AssetLinks {
    return new AssetLinks(baseUrl, this.#secret, this.ttlSeconds, this.now);
  }

  /** A link to `key`, valid for at least `ttlSeconds` (the default lifetime, or longer for a session's job). */
  url(key: string, ttlSeconds = this.ttlSeconds): string {
    const grid = Math.max(1, this.ttlSeconds);
    const periods = Math.ceil(ttlSeconds / grid) + 1;
    const expires = (Math.floor(this.now() / 1000 / grid) + periods) * grid;
    return `${this.baseUrl}/${key}?expires=${expires}&signature=${this.#sign(key, expires)}`;
  }

  /** Seconds left on a link to `key`, or undefined when it is expired, forged or malformed. */
  secondsLeft(key: string, expires: string | undefined, signature: string | undefined): number | undefined {
    if (!expires || !/^\d{1,12}$/.test(expires) || !signature) return undefined;
    const left = Number(expires) - this.now() / 1000;
    if (left <= 0) return undefined;
    const expected = Buffer.from(this.#sign(key, Number(expires)));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given) ? left : undefined;
  }

  #sign(key: string, expires: number): string {
    return createHmac('sha256', this.#secret).update(`${key}\n${expires}`).digest('base64url');
  }
}
