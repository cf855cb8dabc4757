// Tools in a live conversation (issue 33): a visitor (a real WebRTC client) asks by typed chat
// (the spoken path is not covered yet: see the agent-tools report), the OpenAI wire fake answers with tool calls as the real plugin parses them, and
// the agent runs them: a webhook tool through the control plane to a receiver on this machine
// that verifies the Standard Webhooks signature and answers, whose answer is in the model's next
// request and then in the reply the visitor receives; arguments that break the tool's schema
// never reach the receiver (the model is told why); a client tool answered by the visitor's RPC
// handler, and one with no handler (the model is told); end_session ends the session
// `agent_ended`; the transcript has the tool turns.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { GOODBYES } from '../../agent/conversation/tools.ts';
import { createTool as createToolFor } from '../support/created-tool.ts';
import type { ChatRecord, FakeToolCallReply } from '../support/fakes/openai.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { agentCaptions } from '../support/talking-visitor.ts';
import { toolReceiver } from '../support/tool-receiver.ts';
import { typeUntilTaken } from '../support/typed-turns.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';

const fakes = sharedProviderFakes();
const MARKER = 'Marker: tools-cloud-5d2b.';
const APPOINTMENT = 'Tuesday 6 May at 14:30 with Dr. Lee.';
let service: TestService;
let account: TestAccount;

/** The webhook receiver: verifies each call's signature with the tool's secret, answers APPOINTMENT. */
const receiver = toolReceiver(() => APPOINTMENT);
const { calls } = receiver;

beforeAll(async () => {
  ({ service, account } = await startVisitorService({ WEBHOOKS_ALLOW_PRIVATE: 'true' }));
});
afterAll(async () => {
  receiver.stop();
  await service.stop();
});

const createTool = (body: Record<string, unknown>) => createToolFor(account, body);

/** The model as scripted: a call per kind of question, and after a tool's result a reply quoting it. */
function model(chat: ChatRecord): string | FakeToolCallReply {
  const last = chat.messages.at(-1);
  if (last?.role === 'tool') return `Here is what I found: ${chat.toolResults.at(-1)!.content}`;
  const asked = chat.userTexts.at(-1) ?? '';
  if (/appointment/i.test(asked))
    return { toolCalls: [{ name: 'get_appointment', arguments: { date: '2025-05-06' } }] };
  if (/broken/i.test(asked)) return { toolCalls: [{ name: 'get_appointment', arguments: { date: 'soon' } }] };
  if (/map/i.test(asked)) return { toolCalls: [{ name: 'show_map', arguments: { place: 'Main Street 5' } }] };
  if (/camera/i.test(asked)) return { toolCalls: [{ name: 'open_camera', arguments: {} }] };
  if (/goodbye/i.test(asked)) return { toolCalls: [{ name: 'end_call', arguments: {} }] };
  return 'Hello! How can I help?';
}

const chats = () => fakes.openai.chats.filter((chat) => chat.system.includes(MARKER));
/** The tool results the model was given, in order (each once, from the request that first carried it). */
const lastToolResult = () =>
  chats()
    .filter((chat) => chat.messages.at(-1)?.role === 'tool')
    .at(-1)
    ?.toolResults.at(-1);

test('webhook, client and end_session tools in a typed conversation', async () => {
  fakes.openai.respond((chat) => (chat.system.includes(MARKER) ? model(chat) : 'Hello!'));
  const appointment = await createTool({
    name: 'get_appointment',
    type: 'webhook',
    description: "Looks up the visitor's appointment on a date.",
    parameters: {
      type: 'object',
      properties: { date: { type: 'string', minLength: 10, maxLength: 10, description: 'YYYY-MM-DD' } },
      required: ['date'],
    },
    url: receiver.url,
    timeout_ms: 3000,
  });
  receiver.secret = appointment.secret!;
  const map = await createTool({
    name: 'show_map',
    type: 'client',
    description: 'Shows a map of a place in the app.',
    parameters: { type: 'object', properties: { place: { type: 'string' } }, required: ['place'] },
    timeout_ms: 2000,
  });
  const camera = await createTool({
    name: 'open_camera',
    type: 'client',
    description: "Opens the visitor's camera.",
    timeout_ms: 2000,
  });
  const end = await createTool({ name: 'end_call', type: 'end_session', description: 'Ends the call.' });

  const identity = await createIdentity(account, { language: 'en', prompt: `You are Ada, a receptionist. ${MARKER}` });
  const started = await postSessionStart(account, {
    identity_id: identity.identity_id,
    avatar_enabled: false,
    tool_ids: [appointment.tool_id, map.tool_id, camera.tool_id, end.tool_id],
  });
  expect(started.status).toBe(200);
  const session = (await started.json()) as StartedSession & { session_id?: string };
  const sessionId = session.room_name;
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const captions = agentCaptions(visitor);
  const mapCalls: string[] = [];
  visitor.room.localParticipant!.registerRpcMethod('show_map', async (data) => {
    mapCalls.push(data.payload);
    return 'The map of Main Street 5 is on the screen.';
  });
  const type = async (text: string) => {
    const before = chats().length;
    await typeUntilTaken(
      visitor.room.localParticipant!,
      text,
      () =>
        chats()
          .slice(before)
          .some((chat) => chat.userTexts.at(-1) === text),
      `"${text}" to reach the model`,
    );
  };
  try {
    await eventually(() => visitor.agent(), 20_000, 'the agent');

    // Typed: the webhook is called, signed; its answer goes to the model, and the reply to the visitor.
    await type('Is my appointment on 6 May still on?');
    await eventually(() => calls.length === 1, 20_000, 'the receiver to be called');
    expect(calls[0]).toMatchObject({ tool: 'get_appointment', arguments: { date: '2025-05-06' } });
    await eventually(
      () => lastToolResult()?.content.includes(APPOINTMENT),
      20_000,
      "the receiver's answer to reach the model",
    );
    await eventually(
      // agents gives the model a tool's string result as JSON: the reply quotes it in quotes.
      () => captions().some((text) => text.includes(`Here is what I found: "${APPOINTMENT.slice(0, -1)}`)),
      20_000,
      'the answer',
    ).catch((error) => {
      throw new Error(
        `${error.message}; captions: ${JSON.stringify(captions())}; replies: ${JSON.stringify(chats().map((c) => c.reply))}`,
      );
    });

    // Arguments that break the schema: nothing is called, the model is told why.
    await type('This one is broken.');
    await eventually(() => lastToolResult()?.content.includes('get_appointment was not called'), 20_000, 'the refusal');
    expect(lastToolResult()!.content).toContain('date must NOT have fewer than 10 characters');
    expect(calls).toHaveLength(1);

    // A client tool, answered by the visitor's app; one with no handler there.
    await type('Show me the map, please.');
    await eventually(() => mapCalls.length === 1, 20_000, 'the RPC');
    expect(JSON.parse(mapCalls[0]!)).toEqual({ place: 'Main Street 5' });
    await eventually(
      () => lastToolResult()?.content.includes('The map of Main Street 5 is on the screen.'),
      20_000,
      'the map',
    );
    await type('Open the camera.');
    await eventually(
      () => lastToolResult()?.content.includes("the visitor's app does not handle it"),
      20_000,
      'no handler',
    );

    // The transcript keeps each call as a tool turn.
    const transcript = await eventually(
      async () => {
        const answer = await account.call('GET', `/v1/sessions/${sessionId}/transcript`);
        const body = (await answer.json()) as { turns: { role: string; text: string; tool_call: any }[] };
        const tools = body.turns.filter((turn) => turn.role === 'tool');
        return tools.length >= 4 ? tools : undefined;
      },
      20_000,
      'the tool turns',
    );
    expect(transcript.map((turn) => [turn.tool_call.name, turn.tool_call.outcome])).toEqual([
      ['get_appointment', 'ok'],
      ['get_appointment', 'invalid_arguments'],
      ['show_map', 'ok'],
      ['open_camera', 'error'],
    ]);
    expect(transcript[0]!.text).toBe(APPOINTMENT);

    // end_session: a goodbye, then the session ends agent_ended.
    await type('Thanks, goodbye.');
    await eventually(
      async () => {
        const answer = await account.call('GET', `/v1/sessions/${sessionId}`);
        return ((await answer.json()) as { end_reason: string | null }).end_reason === 'agent_ended';
      },
      30_000,
      'the session to end agent_ended',
    );
    // The goodbye is heard to its last word before the room closes: its caption, sent as the
    // visitor hears each word, arrived whole (ended at its playout, the last 0.3–0.6 s were cut).
    expect(captions()).toContain(GOODBYES.en);
  } finally {
    await visitor.leave().catch(() => undefined);
  }
}, 240_000);
