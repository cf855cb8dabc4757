// The agent workers as the control plane sees them (docs/api.md#internal): each worker posts a
// heartbeat (src/contract/worker-heartbeat.ts) twice a second (HEARTBEAT_INTERVAL_SECONDS, 0.5 s)
// to POST /internal/workers/heartbeat, signed with the LiveKit API key and secret both sides hold;
// session starts are admitted against them (admission.ts).

import { and, eq, inArray, lt, sql } from 'drizzle-orm';
import { Elysia } from 'elysia';
import { TokenVerifier } from 'livekit-server-sdk';
import { bearerToken, type InternalDoor } from '../auth/index.ts';
import { HEARTBEAT_PATH, HEARTBEAT_TTL_SECONDS, WorkerHeartbeat } from '../contract/index.ts';
import { secondsAgo, secondsFromNow } from '../db/clock.ts';
import type { Database } from '../db/index.ts';
import { ApiError } from '../http/errors.ts';
import { sessions } from '../sessions/schema.ts';
import { agentWorkers } from './schema.ts';

export { admitSession, freeAgentSlots, type SlotCount } from './admission.ts';

/** Rows of workers gone this long are deleted by the sweep. */
const FORGET_AFTER_SECONDS = 3600;

/** Deletes the rows of workers gone for FORGET_AFTER_SECONDS (each restart of a worker is a new one). */
export async function forgetGoneWorkers(db: Database): Promise<void> {
  await db.delete(agentWorkers).where(lt(agentWorkers.expiresAt, secondsAgo(FORGET_AFTER_SECONDS)));
}

type LivekitCredentials = { apiKey: string; apiSecret: string };

/** The worker a heartbeat's token was signed for (its `sub`), once per request: the door asks first, the route after. */
const signedWorkers = new WeakMap<Request, Promise<string | undefined>>();

function signedWorker(verifier: TokenVerifier, request: Request): Promise<string | undefined> {
  let worker = signedWorkers.get(request);
  if (!worker) {
    const token = bearerToken(request);
    worker = token
      ? verifier.verify(token).then(
          (claims) => claims.sub,
          () => undefined,
        )
      : Promise.resolve(undefined);
    signedWorkers.set(request, worker);
  }
  return worker;
}

/** Workers, checked before their heartbeats are read (src/auth/internal-doors.ts); a heartbeat lists at most a worker's sessions. */
export function heartbeatDoor(livekit: LivekitCredentials): InternalDoor {
  const verifier = new TokenVerifier(livekit.apiKey, livekit.apiSecret);
  return {
    matches: (path) => path === HEARTBEAT_PATH,
    maxBodyBytes: 64 * 1024,
    async admit(request) {
      if (!(await signedWorker(verifier, request))) throw new ApiError(401, 'Unknown or unsigned worker');
    },
  };
}

export function workerRoutes(deps: { db: Database; livekit: LivekitCredentials }) {
  const verifier = new TokenVerifier(deps.livekit.apiKey, deps.livekit.apiSecret);
  return new Elysia({ detail: { hide: true } }).post(
    HEARTBEAT_PATH,
    async ({ body, request }) => {
      // The token names the worker it was made for: one worker cannot report for another.
      if ((await signedWorker(verifier, request)) !== body.worker_id)
        throw new ApiError(401, 'Unknown or unsigned worker');
      const values = {
        agentName: body.agent_name,
        capacity: body.capacity,
        runningJobs: body.sessions.length,
        draining: body.draining,
        seenAt: sql`now()`,
        expiresAt: secondsFromNow(HEARTBEAT_TTL_SECONDS),
      };
      await deps.db
        .insert(agentWorkers)
        .values({ id: body.worker_id, ...values })
        .onConflictDoUpdate({ target: agentWorkers.id, set: values });
      // The sessions it runs have their agent (src/sessions/agent-watch.ts watches the others),
      // a draining worker's too until they end or its drain runs out.
      if (body.sessions.length) {
        await deps.db
          .update(sessions)
          .set({ agentSeenAt: sql`now()`, agentWorkerId: body.worker_id })
          .where(and(inArray(sessions.id, body.sessions), eq(sessions.status, 'running')));
      }
      return { ok: true };
    },
    { body: WorkerHeartbeat, parse: 'json' },
  );
}
