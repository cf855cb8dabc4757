// An example request and answer for every public operation, by operationId, written into
// /openapi.json (src/openapi/index.ts) for people reading /docs and for generated clients'
// documentation; schemathesis also sends the request examples. A test checks each example
// against the schema the route validates with (test/http/openapi-examples.test.ts).
import { emptyUsage } from '../credits/index.ts';
import { DOCUMENT_EXAMPLES } from '../knowledge/index.ts';
import { MUSEUM_OUTCOME_SCHEMA } from '../outcomes/index.ts';
import { PUBLISHABLE_KEY_EXAMPLES } from '../publishable-keys/index.ts';
import { RECORDING_EXAMPLES } from '../recordings/index.ts';
import { TOOL_EXAMPLES } from '../tools/index.ts';
import { VISITOR_EXAMPLES } from '../visitors/index.ts';
import { WEBHOOK_EXAMPLES } from '../webhooks/index.ts';

const IDENTITY_ID = 'idn_5XwBbH2Lr8Nd0qVjYc3TfA';
const SESSION_ID = 'ses_7QmZk4Wp1Hs9Vx2LbR6DnE';
const ACCOUNT_ID = 'acc_3Jt8Fq1YvKc5Wm0PzN7SgU';
const CREATED = '2026-11-24T09:30:00.000Z';
const UPDATED = '2026-11-24T09:30:01.000Z';
/** The identity's tool and document (docs/api.md#identity-object). */
const TOOL_ID = 'tool_4Ck2mXbQ9s1LrT0aVnZ7Jp';
const DOCUMENT_ID = 'doc_8Hn3Qw6Zr1Ys5Vd0Lm2KtB';
const IMAGE = `https://likeness.example/assets/identities/${IDENTITY_ID}/a1/image.jpg?expires=1795586400&signature=nurT0V5gtKC8ZTd1zCYadgZf2i7JxERtX7MxQk1eVgo`;

const identity = {
  identity_id: IDENTITY_ID,
  name: 'Ada',
  language: 'en',
  prompt: 'You are Ada, a friendly guide of the city museum.',
  image: IMAGE,
  audio: null,
  voice_id: 'default',
  status: 'ready',
  detail: null,
  pipeline_id: 'builtin',
  provider_avatar_id: null,
  tool_ids: [TOOL_ID],
  document_ids: [DOCUMENT_ID],
  record_sessions: false,
  outcome_schema: null,
  test: false,
  created_at: CREATED,
  updated_at: UPDATED,
};

/** How the example session ended, and what it cost. */
const endedUsage = {
  end_reason: 'ended_by_api',
  billed_minutes: 3,
  credits_charged: 30,
  visitor_seconds: 165,
  streamed_seconds: 165,
  duration_seconds: 170,
};

/** What the example start sets to direct its conversation (docs/api.md#sessions-context). */
const DIRECTION = {
  context: "The visitor's name is Zofia. She visited last week and asked about the Orsay museum's opening hours.",
  greeting: 'Welcome back, Zofia! Shall we plan your visit to the Orsay?',
  idle_timeout_seconds: 120,
};

const session = {
  session_id: SESSION_ID,
  status: 'ended',
  identity_id: IDENTITY_ID,
  avatar_enabled: true,
  language: 'en',
  visual_awareness: true,
  form_factor: 'phone',
  test: false,
  publishable_key_id: null,
  ...endedUsage,
  created_at: CREATED,
  joined_at: '2026-11-24T09:30:04.000Z',
  streaming_started_at: '2026-11-24T09:30:04.600Z',
  ended_at: '2026-11-24T09:32:50.000Z',
  avatar_fallback: null,
  metrics: {
    first_frame_ms: 600,
    voice_to_voice_ms: { p50: 1180, p95: 1720 },
    fps: 24.9,
    turns: 7,
    interruptions: 1,
    tool_calls: 1,
    providers: { stt: 'deepgram', llm: 'openai-compatible', tts: 'elevenlabs' },
  },
  context: DIRECTION.context,
  has_context: true,
  greeting: DIRECTION.greeting,
  client_control: false,
  idle_timeout_seconds: DIRECTION.idle_timeout_seconds,
  record: true,
  recording_notice: 'This conversation is recorded.',
  summary:
    'The visitor asked which museums to see in one afternoon in Paris. Ada suggested the Musée d’Orsay and the Orangerie, both near the Tuileries. The visitor planned to book Orsay tickets for 2 pm.',
  summary_status: 'ready',
  summary_detail: null,
  outcome_schema: MUSEUM_OUTCOME_SCHEMA,
  outcome: { museums: 'Musée d’Orsay, Orangerie', wants_tickets: true },
  outcome_status: 'ready',
  outcome_detail: null,
  visitor_id: 'crm-4821',
  memory_scope: 'identity',
  tool_ids: [TOOL_ID],
  document_ids: [DOCUMENT_ID],
};

const usageCounts = {
  sessions: 4,
  avatar_minutes: 11,
  visitor_seconds: 598,
  streamed_seconds: 640,
  identities: 1,
  credits_spent: { onboarding: 50, session_minute: 110, recorded_minute: 0 },
  credits_granted: 1000,
};

export interface OperationExample {
  /** The JSON body (operations with a multipart body show their fields in the schema instead). */
  request?: unknown;
  /** Status → JSON answer. */
  responses: Record<string, unknown>;
}

export const OPERATION_EXAMPLES: Record<string, OperationExample> = {
  listIdentities: {
    responses: {
      200: [
        {
          identity_id: IDENTITY_ID,
          name: 'Ada',
          language: 'en',
          status: 'ready',
          image: IMAGE,
          tool_ids: [TOOL_ID],
          document_ids: [DOCUMENT_ID],
          test: false,
          created_at: CREATED,
          updated_at: UPDATED,
        },
      ],
    },
  },
  createIdentity: {
    responses: {
      200: identity,
      422: { detail: [{ loc: ['body', 'image'], msg: 'No face found in the image', type: 'image.no_face' }] },
    },
  },
  getIdentity: { responses: { 200: identity, 404: { detail: 'Identity not found' } } },
  getIdentityStatus: {
    responses: { 200: { identity_id: IDENTITY_ID, status: 'training', updated_at: UPDATED, detail: null } },
  },
  updateIdentity: {
    responses: { 200: { ...identity, name: 'Ada Lovelace' }, 202: { ...identity, status: 'training' } },
  },
  deleteIdentity: { responses: {} },
  listPipelines: {
    responses: {
      200: [
        {
          pipeline_id: 'builtin',
          description: 'The CPU talking head, drawn in the agent job from the photo.',
          default: true,
          renders: {
            kind: 'frames',
            fps: 25,
            portrait: { width: 540, height: 960 },
            landscape: { width: 960, height: 540 },
            provider: null,
          },
        },
      ],
    },
  },
  listVoices: {
    responses: {
      200: [
        {
          voice_id: 'adam',
          name: 'Adam',
          description: 'Deep, calm, American',
          gender: 'male',
          multilingual: true,
          languages: ['auto', 'en', 'es', 'pl', 'uk'],
        },
      ],
    },
  },
  startSession: {
    request: {
      identity_id: IDENTITY_ID,
      form_factor: 'phone',
      ...DIRECTION,
      record: true,
      recording_notice: 'This conversation is recorded.',
    },
    responses: {
      200: {
        room_name: SESSION_ID,
        token: 'eyJhbGciOiJIUzI1NiJ9.eyJ2aWRlbyI6eyJyb29tIjoic2VzXzdRbVprNFdwMUhzOVZ4MkxiUjZEbkUifX0.c2lnbmF0dXJl',
        rtc_url: 'wss://likeness.example',
        dispatch_id: 'AD_kP3sWq8Lx2Vn',
        user: { id: ACCOUNT_ID },
        created_at: CREATED,
        visual_awareness: true,
        record: true,
      },
      402: { detail: 'Insufficient credits: an avatar session needs 12 credits for its first minute' },
    },
  },
  endSession: {
    responses: {
      200: {
        session_id: SESSION_ID,
        status: 'ended',
        identity_id: IDENTITY_ID,
        pipeline_id: 'builtin',
        mode: 'meeting_agent',
        metadata: {
          ...endedUsage,
          ended_at: '2026-11-24T09:32:50.000Z',
          avatar_fallback: null,
        },
      },
    },
  },
  getSession: { responses: { 200: session } },
  // Lists carry no context's text (has_context says whether there is one).
  listSessions: { responses: { 200: [{ ...session, context: null, outcome_schema: null }] } },
  getSessionTranscript: {
    responses: {
      200: {
        session_id: SESSION_ID,
        turns: [
          {
            role: 'agent',
            text: 'Hello! I am Ada. What would you like to see today?',
            language: 'en',
            interrupted: false,
            ordered_by: null,
            tool_call: null,
            document_ids: null,
            started_at: '2026-11-24T09:30:05.000Z',
            ended_at: '2026-11-24T09:30:08.000Z',
          },
          {
            role: 'user',
            text: 'When does the museum open?',
            language: 'en',
            interrupted: false,
            ordered_by: null,
            tool_call: null,
            document_ids: null,
            started_at: '2026-11-24T09:30:10.000Z',
            ended_at: '2026-11-24T09:30:11.500Z',
          },
          {
            // The agent looked up today's hours with the identity's webhook tool...
            role: 'tool',
            text: '{"opens":"09:30","closes":"18:00"}',
            language: null,
            interrupted: false,
            ordered_by: null,
            tool_call: {
              call_id: 'call_7Tq2Wm9Lx4Vb',
              name: 'opening_hours',
              arguments: { date: '2026-11-24' },
              result_excerpt: '{"opens":"09:30","closes":"18:00"}',
              duration_ms: 182,
              outcome: 'ok',
            },
            document_ids: null,
            started_at: '2026-11-24T09:30:11.600Z',
            ended_at: '2026-11-24T09:30:11.800Z',
          },
          {
            // ...and answered with a passage of the identity's document in its context.
            role: 'agent',
            text: 'Today it opens at 9:30 and closes at 6 pm; on Thursdays it stays open until 9:45.',
            language: 'en',
            interrupted: false,
            ordered_by: null,
            tool_call: null,
            document_ids: [DOCUMENT_ID],
            started_at: '2026-11-24T09:30:11.900Z',
            ended_at: '2026-11-24T09:30:16.000Z',
          },
          {
            role: 'agent',
            text: 'Your tickets for 2 pm are booked.',
            language: 'en',
            interrupted: false,
            ordered_by: 'api',
            tool_call: null,
            document_ids: null,
            started_at: '2026-11-24T09:30:17.000Z',
            ended_at: '2026-11-24T09:30:18.800Z',
          },
        ],
      },
    },
  },
  saySession: {
    request: { text: 'Your tickets for 2 pm are booked.', interrupt: true },
    responses: {
      200: { order_id: 'ord_8Jq2Lm5Xv0Rk3Wn7Tb1Ys4', session_id: SESSION_ID, operation: 'say' },
      503: { detail: "The session's agent is not in the room yet; retry shortly" },
      504: { detail: 'The agent did not answer within 5 s; the order may still be carried out' },
    },
  },
  interruptSession: {
    responses: {
      200: { order_id: 'ord_2Vb7Nq4Xw9Lk1Ct6Hs3Rz8', session_id: SESSION_ID, operation: 'interrupt' },
      409: { detail: 'The session has ended' },
    },
  },
  addSessionContext: {
    request: { text: 'The visitor has just opened the returns form.', respond: false },
    responses: {
      200: { order_id: 'ord_5Tm1Hx8Pq3Wz6Lc0Vn2Kd7', session_id: SESSION_ID, operation: 'context' },
      409: {
        detail:
          "The agent refused the order: The conversation's context is full: its orders may add up to 32000 characters",
      },
    },
  },
  getCredits: {
    responses: {
      200: {
        balance: 840,
        entries: [
          {
            entry_id: 'led_9Rk2Vw7Yp0Lq4Tn',
            kind: 'session_minute',
            amount: -10,
            reference: `session:${SESSION_ID}:minute:2`,
            created_at: '2026-11-24T09:32:04.600Z',
          },
          {
            entry_id: 'led_1Hx5Mz8Bc3Dj6Fs',
            kind: 'onboarding',
            amount: -50,
            reference: `identity:${IDENTITY_ID}`,
            created_at: UPDATED,
          },
        ],
        has_more: true,
        low_balance_threshold: 100,
      },
    },
  },
  updateCreditSettings: {
    request: { low_balance_threshold: 200 },
    responses: { 200: { balance: 840, low_balance_threshold: 200 } },
  },
  ...WEBHOOK_EXAMPLES,
  ...TOOL_EXAMPLES,
  ...DOCUMENT_EXAMPLES,
  ...PUBLISHABLE_KEY_EXAMPLES,
  ...VISITOR_EXAMPLES,
  ...RECORDING_EXAMPLES,
  getUsage: {
    responses: {
      200: {
        from: '2026-11-23T00:00:00.000Z',
        to: '2026-11-25T00:00:00.000Z',
        granularity: 'day',
        buckets: [
          { start: '2026-11-23T00:00:00.000Z', ...emptyUsage(), credits_granted: 1000 },
          { start: '2026-11-24T00:00:00.000Z', ...usageCounts, credits_granted: 0 },
        ],
        totals: usageCounts,
      },
    },
  },
};

interface DocumentOperation {
  operationId?: string;
  requestBody?: { content?: Record<string, { example?: unknown }> };
  responses?: Record<string, { content?: Record<string, { example?: unknown }> }>;
}

/** Writes each operation's examples into the generated document. */
export function withExamples(document: { paths?: Record<string, Record<string, DocumentOperation>> }): void {
  for (const operations of Object.values(document.paths ?? {})) {
    for (const operation of Object.values(operations)) {
      const example = operation.operationId ? OPERATION_EXAMPLES[operation.operationId] : undefined;
      if (!example) continue;
      const json = operation.requestBody?.content?.['application/json'];
      if (json && example.request !== undefined) json.example = example.request;
      for (const [status, answer] of Object.entries(example.responses)) {
        const content = operation.responses?.[status]?.content?.['application/json'];
        if (content) content.example = answer;
      }
    }
  }
}
