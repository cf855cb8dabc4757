// The session's tools as the model calls them (agent/conversation/tools.ts), against a local
// stand-in for the control plane's tool-call route and a stand-in RPC participant: arguments
// checked with the tool's schema before anything is called, each outcome told to the model as
// text it can say, each call recorded (transcript tool turn, turn metrics), a slow call's filler
// said once per turn, end_session's goodbye and agent_ended.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, llm } from '@livekit/agents';
import { RpcError } from '@livekit/rtc-node';
import { conversationTools, GOODBYES, TOOL_FILLERS, type ToolsOptions } from '../../agent/conversation/tools.ts';
import {
  type DispatchTool,
  TOOL_RESULT_EXCERPT_CHARS,
  type ToolCallAnswer,
  type ToolCallRecord,
  type ToolCallRequest,
} from '../../src/contract/index.ts';

const logger = { info() {}, warn() {} };

const getAppointment: DispatchTool = {
  tool_id: 'tool_appt',
  name: 'get_appointment',
  description: "The visitor's appointment on a date.",
  type: 'webhook',
  parameters: {
    type: 'object',
    properties: { date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } },
    required: ['date'],
    additionalProperties: false,
  },
  timeout_ms: 2_000,
};
const showMap: DispatchTool = {
  tool_id: 'tool_map',
  name: 'show_map',
  description: 'Shows a map of the place in the app.',
  type: 'client',
  parameters: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] },
  timeout_ms: 500,
};
const hangUp: DispatchTool = {
  tool_id: 'tool_end',
  name: 'end_call',
  description: 'Ends the conversation when the visitor says goodbye.',
  type: 'end_session',
  parameters: { type: 'object', properties: {} },
  timeout_ms: 1_000,
};

/** The control plane's tool-call route, as this test wants it to answer. */
let answer: (request: ToolCallRequest) => Promise<Response> | Response = () =>
  Response.json({ outcome: 'ok', result: 'ok', duration_ms: 1 } satisfies ToolCallAnswer);
const received: { authorization: string | null; body: ToolCallRequest }[] = [];
let controlPlane: ReturnType<typeof Bun.serve>;

beforeAll(() => {
  initializeLogger({ pretty: false, level: 'error' });
  controlPlane = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const body = (await req.json()) as ToolCallRequest;
      received.push({ authorization: req.headers.get('authorization'), body });
      return answer(body);
    },
  });
});
afterAll(() => controlPlane.stop(true));

/** Stand-ins for what execute gets from agents: the session (say) and the turn's speech. */
function runContext(
  turn = 'speech_1',
  { chatItems = [], agentState = 'thinking' }: { chatItems?: llm.ChatItem[]; agentState?: string } = {},
) {
  const said: { text: string; addToChatCtx?: boolean }[] = [];
  const session = {
    agentState,
    say(text: string, options?: { addToChatCtx?: boolean }) {
      said.push({ text, addToChatCtx: options?.addToChatCtx });
      return { waitForPlayout: () => Promise.resolve() };
    },
  };
  return { said, ctx: { session, speechHandle: { id: turn, chatItems } } as unknown as llm.ToolOptions['ctx'] };
}

function build(overrides: Partial<ToolsOptions> = {}) {
  const calls: ToolCallRecord[] = [];
  let ended = 0;
  const rpc: { method: string; payload: string; destinationIdentity: string; responseTimeout?: number }[] = [];
  const tools = conversationTools({
    tools: [getAppointment, showMap, hangUp],
    toolCallsUrl: `http://127.0.0.1:${controlPlane.port}/internal/sessions/ses_1/tool-calls`,
    reportToken: 'job-token',
    visitorIdentity: 'visitor-1',
    participant: () => ({
      performRpc: async (params) => {
        rpc.push(params);
        return 'The map is shown.';
      },
    }),
    language: () => 'en',
    onCall: (call) => calls.push(call),
    endSession: async () => void ended++,
    logger,
    ...overrides,
  });
  return { tools, calls, rpc, ended: () => ended };
}

async function call(tool: llm.FunctionTool, args: unknown, ctx = runContext().ctx, id = 'call_1') {
  return tool.execute(args as never, { ctx, toolCallId: id, abortSignal: new AbortController().signal });
}

describe('webhook tools', () => {
  test("valid arguments reach the control plane with the job's token; the receiver's answer is the model's", async () => {
    answer = () => Response.json({ outcome: 'ok', result: 'Tuesday 14:30 with Dr. Lee.', duration_ms: 40 });
    const { tools, calls } = build();
    received.length = 0;
    const result = await call(tools.get_appointment!, { date: '2025-05-06' });
    expect(result).toBe('Tuesday 14:30 with Dr. Lee.');
    expect(received).toEqual([
      {
        authorization: 'Bearer job-token',
        body: { call_id: 'call_1', tool_id: 'tool_appt', arguments: { date: '2025-05-06' } },
      },
    ]);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      call_id: 'call_1',
      name: 'get_appointment',
      arguments: { date: '2025-05-06' },
      result_excerpt: 'Tuesday 14:30 with Dr. Lee.',
      outcome: 'ok',
    });
  });

  test('arguments that break the schema are never sent; the model is told what was wrong', async () => {
    const { tools, calls } = build();
    received.length = 0;
    const missing = String(await call(tools.get_appointment!, {}));
    const wrong = String(await call(tools.get_appointment!, { date: 'next Tuesday' }));
    const extra = String(await call(tools.get_appointment!, { date: '2025-05-06', time: 'noon' }));
    expect(received).toHaveLength(0);
    expect(missing).toContain("must have required property 'date'");
    expect(wrong).toContain('date must match pattern');
    expect(extra).toContain('must NOT have additional properties');
    for (const told of [missing, wrong, extra]) expect(told).toContain('get_appointment was not called');
    expect(calls.map((c) => c.outcome)).toEqual(['invalid_arguments', 'invalid_arguments', 'invalid_arguments']);
  });

  test("the control plane's failures and timeouts reach the model as sentences; nothing throws", async () => {
    const { tools, calls } = build();
    answer = () => Response.json({ outcome: 'error', result: 'the receiver answered 500', duration_ms: 12 });
    expect(String(await call(tools.get_appointment!, { date: '2025-05-06' }))).toBe(
      'get_appointment failed: the receiver answered 500. Tell the visitor you could not do it right now, and do not guess a result.',
    );
    answer = () => Response.json({ outcome: 'timeout', result: 'no answer in 2000 ms', duration_ms: 2000 });
    expect(String(await call(tools.get_appointment!, { date: '2025-05-06' }))).toContain(
      'did not answer in time; nothing is known about its result',
    );
    answer = () => new Response('nope', { status: 403 });
    expect(String(await call(tools.get_appointment!, { date: '2025-05-06' }))).toContain(
      'the service refused the call (HTTP 403)',
    );
    expect(calls.map((c) => c.outcome)).toEqual(['error', 'timeout', 'error']);
  });

  test("a long answer is kept whole for the model, cut in the transcript's excerpt", async () => {
    const long = 'x'.repeat(3_000);
    answer = () => Response.json({ outcome: 'ok', result: long, duration_ms: 1 });
    const { tools, calls } = build();
    expect(await call(tools.get_appointment!, { date: '2025-05-06' })).toBe(long);
    expect(calls[0]!.result_excerpt.length).toBe(TOOL_RESULT_EXCERPT_CHARS);
  });

  test('a call slower than the filler threshold gets the filler once per turn, outside the chat context', async () => {
    answer = async () => {
      await Bun.sleep(250);
      return Response.json({ outcome: 'ok', result: 'done', duration_ms: 250 });
    };
    const { tools } = build({ fillerAfterMs: 100 });
    const first = runContext('speech_a');
    await call(tools.get_appointment!, { date: '2025-05-06' }, first.ctx, 'c1');
    await call(tools.get_appointment!, { date: '2025-05-07' }, first.ctx, 'c2');
    expect(first.said).toEqual([{ text: TOOL_FILLERS.en, addToChatCtx: false }]);
    const spanish = build({ fillerAfterMs: 100, language: () => 'es' });
    const second = runContext('speech_b');
    await call(spanish.tools.get_appointment!, { date: '2025-05-06' }, second.ctx);
    expect(second.said).toEqual([{ text: TOOL_FILLERS.es, addToChatCtx: false }]);
    answer = () => Response.json({ outcome: 'ok', result: 'fast', duration_ms: 1 });
    const quick = runContext('speech_c');
    await call(tools.get_appointment!, { date: '2025-05-06' }, quick.ctx);
    await Bun.sleep(150);
    expect(quick.said).toEqual([]);
  });

  test('a turn that had words before its call (playing, or played) gets no filler of ours', async () => {
    answer = async () => {
      await Bun.sleep(250);
      return Response.json({ outcome: 'ok', result: 'done', duration_ms: 250 });
    };
    const { tools } = build({ fillerAfterMs: 100 });
    // The offline model's filler, said as it began writing the call, still playing.
    const playing = runContext('speech_d', { agentState: 'speaking' });
    await call(tools.get_appointment!, { date: '2025-05-06' }, playing.ctx);
    expect(playing.said).toEqual([]);
    // A cloud model's own "let me check", played before the call ran long.
    const played = runContext('speech_e', {
      chatItems: [llm.ChatMessage.create({ role: 'assistant', content: 'Let me look that up.' })],
    });
    await call(tools.get_appointment!, { date: '2025-05-06' }, played.ctx);
    expect(played.said).toEqual([]);
    // Words of the visitor's, or an empty message, are not the agent's.
    const silent = runContext('speech_f', {
      chatItems: [
        llm.ChatMessage.create({ role: 'user', content: 'Is it on?' }),
        llm.ChatMessage.create({ role: 'assistant', content: ' ' }),
      ],
    });
    await call(tools.get_appointment!, { date: '2025-05-06' }, silent.ctx);
    expect(silent.said).toEqual([{ text: TOOL_FILLERS.en, addToChatCtx: false }]);
  });
});

describe('client tools', () => {
  test("the visitor's app is asked over RPC: method = the tool's name, payload = the arguments' JSON", async () => {
    const { tools, rpc, calls } = build();
    expect(await call(tools.show_map!, { place: 'Main Street 5' })).toBe('The map is shown.');
    expect(rpc).toEqual([
      {
        destinationIdentity: 'visitor-1',
        method: 'show_map',
        payload: '{"place":"Main Street 5"}',
        responseTimeout: 500,
      },
    ]);
    expect(calls[0]).toMatchObject({ name: 'show_map', outcome: 'ok', result_excerpt: 'The map is shown.' });
  });

  test("each RPC failure is told to the model: no handler, no answer in time, the app's own error, gone", async () => {
    const failures = [
      [RpcError.builtIn('UNSUPPORTED_METHOD'), 'error', "the visitor's app does not handle it"],
      [RpcError.builtIn('RESPONSE_TIMEOUT'), 'timeout', 'did not answer in time'],
      [new RpcError(1500, 'No map here'), 'error', "the visitor's app answered with an error: No map here"],
      [RpcError.builtIn('RECIPIENT_DISCONNECTED'), 'error', "the visitor's app is not connected"],
    ] as const;
    for (const [error, outcome, told] of failures) {
      const { tools, calls } = build({
        participant: () => ({
          performRpc: async () => {
            throw error;
          },
        }),
      });
      expect(String(await call(tools.show_map!, { place: 'here' }))).toContain(told);
      expect(calls[0]!.outcome).toBe(outcome);
    }
  });
});

describe('end_session', () => {
  test('says goodbye in the language spoken, then reports agent_ended; no reply is asked for', async () => {
    const { tools, ended, calls } = build({ language: () => 'es' });
    const { ctx, said } = runContext();
    expect(await call(tools.end_call!, {}, ctx)).toBeUndefined();
    expect(said.map((s) => s.text)).toEqual([GOODBYES.es]);
    expect(ended()).toBe(1);
    expect(calls[0]).toMatchObject({ name: 'end_call', outcome: 'ok' });
  });
});

test('a tool whose schema does not compile is left out, the others are offered', () => {
  const broken = { ...getAppointment, name: 'broken', parameters: { type: 'object', properties: { a: { type: 7 } } } };
  const { tools } = build({ tools: [broken, showMap] });
  expect(Object.keys(tools)).toEqual(['show_map']);
});
