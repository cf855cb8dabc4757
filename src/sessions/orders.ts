// Directing a running session from the customer's backend (docs/api.md#sessions-direct):
// `say`, `interrupt` and `context`. The API process checks the session and finds its agent in
// the room, keeps the order as a row, and sends it to the agent alone as a reliable data packet
// on ORDER_TOPIC (LiveKit's server API), with the proof only the session's job can check
// (orderProof): a packet's missing sender does not tell the server's from a visitor's. The
// agent's job reports how it took the order to whichever API process its report reaches
// (job-reports.ts → recordOrderOutcome); the call polls the row for it, at most ORDER_WAIT_MS.
import { ParticipantInfo_Kind } from '@livekit/protocol';
import { and, eq, isNull } from 'drizzle-orm';
import { t } from 'elysia';
import { DataPacket_Kind, type ParticipantInfo } from 'livekit-server-sdk';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import {
  CONTEXT_MAX_CHARS,
  ORDER_OPERATIONS,
  ORDER_TOPIC,
  type OrderOperation,
  type OrderReport,
  orderProof,
  PUBLISH_ON_BEHALF,
  SAY_MAX_CHARS,
  type SessionOrder,
} from '../contract/index.ts';
import { newId } from '../db/ids.ts';
import type { Database } from '../db/index.ts';
import { findOwned } from '../db/owned.ts';
import { oneOf } from '../http/enum-schema.ts';
import { ApiError, errorResponses, invalid } from '../http/errors.ts';
import type { LivekitConnection } from '../livekit/index.ts';
import { log } from '../logging/index.ts';
import { SessionParams } from './contract.ts';
import { sessionOrders, sessions } from './schema.ts';

export const SayBody = t.Object({
  text: t.String({
    minLength: 1,
    maxLength: SAY_MAX_CHARS,
    description: "Said exactly as given (surrounding whitespace dropped), in the identity's voice, with its lips.",
  }),
  interrupt: t.Optional(
    t.Boolean({
      description: 'true (default): cut off what the avatar is saying and say this at once; false: after it.',
    }),
  ),
});

export const ContextBody = t.Object({
  text: t.String({
    minLength: 1,
    maxLength: CONTEXT_MAX_CHARS,
    description:
      'Information for the agent, not spoken: its next replies take it into account. At most 32,000 characters over a session.',
  }),
  respond: t.Optional(
    t.Boolean({
      description:
        'true: the agent answers now with it in mind (cutting off what it says); false (default): it informs the next reply.',
    }),
  ),
});

export const OrderResponse = t.Object(
  {
    order_id: t.String({ description: 'The order (`ord_…`), as the service log names it.' }),
    session_id: t.String(),
    operation: oneOf(ORDER_OPERATIONS),
  },
  { description: 'The agent took the order: it is being carried out.' },
);

/** How long a call waits for the agent to take its order: then 504, the order possibly still carried out. */
export const ORDER_WAIT_MS = 5_000;
/** How often the waiting call reads the order's row. */
const ORDER_POLL_MS = 25;
/** The agent is not in the room yet (it joins seconds after the start): ask again this much later. */
const NO_AGENT_RETRY_AFTER_SECONDS = 2;

export interface OrderDeps {
  db: Database;
  livekit: LivekitConnection;
}

type OrderBody =
  | { operation: 'say'; text: string; interrupt?: boolean }
  | { operation: 'interrupt' }
  | {
      operation: 'context';
      text: string;
      respond?: boolean;
    };

/** The session's agent among the room's participants: an agent that does not publish on another's behalf (an avatar service does), the latest to join. */
export function agentOf(participants: ParticipantInfo[]): ParticipantInfo | undefined {
  return participants
    .filter((p) => p.kind === ParticipantInfo_Kind.AGENT && !p.attributes[PUBLISH_ON_BEHALF])
    .sort((a, b) => Number(b.joinedAt) - Number(a.joinedAt))[0];
}

function unblank(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) throw invalid(['body', 'text'], 'text must not be blank', 'string_blank');
  return trimmed;
}

/** Sends one order to the session's agent and waits for how it was taken (docs/api.md#sessions-direct). */
export async function placeOrder(deps: OrderDeps, accountId: string, sessionId: string, body: OrderBody) {
  const { db, livekit } = deps;
  const session = await findOwned(db, sessions, accountId, sessionId, 'Session');
  if (session.status === 'ended') throw new ApiError(409, 'The session has ended');
  const orderId = newId('ord');
  const header = { order_id: orderId, proof: orderProof(session.reportTokenHash, orderId) };
  const order: SessionOrder =
    body.operation === 'say'
      ? { ...header, operation: 'say', text: unblank(body.text), interrupt: body.interrupt ?? true }
      : body.operation === 'context'
        ? { ...header, operation: 'context', text: unblank(body.text), respond: body.respond ?? false }
        : { ...header, operation: 'interrupt' };
  const retryLater = (detail: string) =>
    new ApiError(503, detail, { 'retry-after': String(NO_AGENT_RETRY_AFTER_SECONDS) });

  let participants: ParticipantInfo[];
  try {
    participants = await livekit.rooms.listParticipants(session.id);
  } catch (error) {
    log.warn({ err: error, session_id: session.id }, "an order could not list the session's room");
    throw retryLater("The session's room could not be reached; retry shortly");
  }
  const agent = agentOf(participants);
  if (!agent) throw retryLater("The session's agent is not in the room yet; retry shortly");
  if (!participants.some((p) => p.identity === session.visitorIdentity))
    throw new ApiError(409, 'The visitor is not in the room: the conversation starts once they join');

  await db.insert(sessionOrders).values({ id: order.order_id, sessionId: session.id, operation: order.operation });
  try {
    await livekit.rooms.sendData(
      session.id,
      new TextEncoder().encode(JSON.stringify(order)),
      DataPacket_Kind.RELIABLE,
      {
        destinationIdentities: [agent.identity],
        topic: ORDER_TOPIC,
      },
    );
  } catch (error) {
    log.warn({ err: error, session_id: session.id, order_id: order.order_id }, 'an order could not be sent');
    await db.delete(sessionOrders).where(eq(sessionOrders.id, order.order_id));
    throw retryLater("The order could not be sent to the session's room; retry shortly");
  }

  const deadline = performance.now() + ORDER_WAIT_MS;
  for (;;) {
    const [row] = await db
      .select({ outcome: sessionOrders.outcome, detail: sessionOrders.detail })
      .from(sessionOrders)
      .where(eq(sessionOrders.id, order.order_id));
    if (row?.outcome === 'done')
      return { order_id: order.order_id, session_id: session.id, operation: order.operation as OrderOperation };
    if (row?.outcome === 'refused')
      throw new ApiError(409, `The agent refused the order: ${row.detail ?? 'no reason given'}`);
    if (performance.now() >= deadline) break;
    await Bun.sleep(ORDER_POLL_MS);
  }
  log.warn(
    { session_id: session.id, order_id: order.order_id, operation: order.operation },
    'an order was not answered in time',
  );
  throw new ApiError(
    504,
    `The agent did not answer within ${ORDER_WAIT_MS / 1000} s; the order may still be carried out`,
  );
}

/** An order's outcome as its job reported it: kept once, and only for an order of the reporting session. */
export async function recordOrderOutcome(db: Database, sessionId: string, report: OrderReport): Promise<void> {
  await db
    .update(sessionOrders)
    .set({ outcome: report.outcome, detail: report.detail ?? null, answeredAt: new Date() })
    .where(
      and(eq(sessionOrders.id, report.order_id), eq(sessionOrders.sessionId, sessionId), isNull(sessionOrders.outcome)),
    );
}

const interruptResponses = {
  200: OrderResponse,
  ...errorResponses(401, 404, 409, 503, 504),
};
const orderResponses = { ...interruptResponses, ...errorResponses(422) };

/** POST /sessions/{id}/say, /interrupt, /context. */
export function sessionOrderRoutes<const Prefix extends string>(deps: OrderDeps, audience: Audience<Prefix>) {
  return authenticatedRoutes(deps.db, audience, '/sessions', 'Sessions')
    .post(
      '/:session_id/say',
      ({ caller, params, body }) =>
        placeOrder(deps, caller.accountId, params.session_id, { operation: 'say', ...body }),
      {
        params: SessionParams,
        body: SayBody,
        parse: 'json',
        response: orderResponses,
        detail: {
          operationId: 'saySession',
          summary: 'Make the avatar say exactly this text, at once or after what it is saying',
        },
      },
    )
    .post(
      '/:session_id/interrupt',
      ({ caller, params }) => placeOrder(deps, caller.accountId, params.session_id, { operation: 'interrupt' }),
      {
        params: SessionParams,
        response: interruptResponses,
        detail: { operationId: 'interruptSession', summary: 'Make the avatar stop speaking, voice and lips' },
      },
    )
    .post(
      '/:session_id/context',
      ({ caller, params, body }) =>
        placeOrder(deps, caller.accountId, params.session_id, { operation: 'context', ...body }),
      {
        params: SessionParams,
        body: ContextBody,
        parse: 'json',
        response: orderResponses,
        detail: {
          operationId: 'addSessionContext',
          summary: 'Add information to the conversation, not spoken; optionally answer with it now',
        },
      },
    );
}
