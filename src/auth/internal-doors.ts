// The internal routes' callers (docs/api.md#internal): the operator CLI (the admin token), agent
// jobs (their own session's report token), agent workers (a token signed with the LiveKit
// secret) and LiveKit itself (its webhook's signed token). As at /v1 and the console's API,
// each is checked before a body is read, and each route reads no more than its own small
// bound (declared, in Content-Length), so an anonymous client cannot make the service buffer
// and parse tens of megabytes (issue 28). Each route's module says who its callers are.
import { ApiError } from '../http/errors.ts';

export interface InternalDoor {
  /** Whether `path` is behind this door. */
  matches(path: string): boolean;
  /** The largest body its routes take (one bound, or one per path): above it 413, unread. */
  maxBodyBytes: number | ((path: string) => number);
  /** Throws 401 unless the request's credentials hold. Reads headers only. */
  admit(request: Request, path: string): Promise<void>;
}

/** The bearer token of an `Authorization` header, if it has one. */
export function bearerToken(request: Request): string | undefined {
  return /^Bearer (.+)$/.exec(request.headers.get('authorization') ?? '')?.[1];
}

/**
 * Checks a request with a body to an internal route before the body is read: its door's
 * credentials, then its declared length (a body of undeclared length is refused: every
 * internal caller sends Content-Length). Paths behind no door are left to routing (404).
 */
export async function admitInternal(doors: readonly InternalDoor[], request: Request, path: string): Promise<void> {
  const door = doors.find((d) => d.matches(path));
  if (!door) return;
  await door.admit(request, path);
  const length = request.headers.get('content-length');
  if (length === null) throw new ApiError(411, 'Internal routes need a Content-Length');
  const bound = typeof door.maxBodyBytes === 'function' ? door.maxBodyBytes(path) : door.maxBodyBytes;
  if (Number(length) > bound) throw new ApiError(413, `Request body too large: at most ${bound} bytes`);
}
