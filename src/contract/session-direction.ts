// Directing a session (docs/api.md#sessions-direct): what the customer's backend sets at its
// start and orders while it runs, and what the visitor's app may order from the room when the
// session allows it. The control plane validates the HTTP bodies with schemas built from these
// limits (src/sessions/contract.ts); the agent checks the same limits on what reaches it
// (agent/conversation), since the room is an edge of its own.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { type Static, Type } from '@sinclair/typebox';
import { sha256Hex } from './hashing.ts';

/** `context` at the start: added to the identity's prompt for the session. */
export const SESSION_CONTEXT_MAX_CHARS = 8_000;
/** `greeting` at the start: spoken exactly as given ("" says nothing until the visitor speaks). */
export const GREETING_MAX_CHARS = 500;
/** A `say` order's text: as much as one typed chat message. */
export const SAY_MAX_CHARS = 2_000;
/** A `context` order's text. */
export const CONTEXT_MAX_CHARS = 8_000;
/**
 * What `context` orders may add up to over a session (the model's prompt grows with each): one
 * past it is refused, the session's start context not counted.
 */
export const CONTEXT_TOTAL_MAX_CHARS = 32_000;
/** `idle_timeout_seconds` at the start: at most an hour; 0 never asks. */
export const IDLE_TIMEOUT_MAX_SECONDS = 3_600;

export const ORDER_OPERATIONS = ['say', 'interrupt', 'context'] as const;
export type OrderOperation = (typeof ORDER_OPERATIONS)[number];

/** Where an order came from: the customer's backend (the API) or the visitor's app (the room). */
export const ORDER_SOURCES = ['api', 'client'] as const;
export type OrderSource = (typeof ORDER_SOURCES)[number];

export const SayPayload = Type.Object({
  text: Type.String({ minLength: 1, maxLength: SAY_MAX_CHARS }),
  /** true (default): cut off what the avatar is saying and say this at once; false: after it. */
  interrupt: Type.Optional(Type.Boolean()),
});
export const InterruptPayload = Type.Object({});
export const ContextPayload = Type.Object({
  text: Type.String({ minLength: 1, maxLength: CONTEXT_MAX_CHARS }),
  /** true: the agent answers now with it in mind; false (default): it informs the next reply. */
  respond: Type.Optional(Type.Boolean()),
});

/** What every order on ORDER_TOPIC carries: its id, and `proof` that the control plane sent it (orderProof). */
const OrderHeader = {
  order_id: Type.String({ minLength: 1 }),
  proof: Type.String({ pattern: '^[0-9a-f]{64}$' }),
};

/** An order as the control plane sends it on ORDER_TOPIC; the agent reports its outcome by `order_id`. */
export const SessionOrder = Type.Union([
  Type.Object({ ...OrderHeader, operation: Type.Literal('say'), ...SayPayload.properties }),
  Type.Object({ ...OrderHeader, operation: Type.Literal('interrupt') }),
  Type.Object({ ...OrderHeader, operation: Type.Literal('context'), ...ContextPayload.properties }),
]);

export type SayPayload = Static<typeof SayPayload>;
export type ContextPayload = Static<typeof ContextPayload>;
export type SessionOrder = Static<typeof SessionOrder>;

/**
 * An order's proof: HMAC-SHA256 of its id under the session's report token hashed (SHA-256,
 * hex), the one secret the control plane (its `report_token_hash`) and the session's job (its
 * dispatch's `report_token`) share and a room's participants never see. rtc-node hands the
 * agent a packet from a participant it does not list (one joining or just gone) with no
 * sender, as it does the server's: the proof, not the missing sender, says it is the server's.
 */
export function orderProof(reportTokenHash: string, orderId: string): string {
  return createHmac('sha256', reportTokenHash).update(orderId).digest('hex');
}

/** The key orderProof takes, from the job's report token (the control plane keeps only this hash). */
export function orderKeyOf(reportToken: string): string {
  return sha256Hex(reportToken);
}

/** Whether `order` carries the proof of this session's key. */
export function provesOrder(key: string, order: Pick<SessionOrder, 'order_id' | 'proof'>): boolean {
  const expected = Buffer.from(orderProof(key, order.order_id), 'hex');
  const given = Buffer.from(order.proof, 'hex');
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** How the agent took an order: carried out (`done`), or refused with a reason the caller can act on. */
export const ORDER_OUTCOMES = ['done', 'refused'] as const;
export type OrderOutcome = (typeof ORDER_OUTCOMES)[number];

/**
 * An RPC error's code when the agent refuses an order from the room (LiveKit keeps 1001–1999
 * for its own errors; these read as the HTTP status the API would answer, plus 2000): not
 * allowed in this session, a payload out of bounds, too many, or a refusal of the order itself
 * (e.g. the context is full).
 */
export const ORDER_RPC_ERRORS = {
  notAllowed: 2403,
  refused: 2409,
  invalid: 2422,
  tooMany: 2429,
} as const;
