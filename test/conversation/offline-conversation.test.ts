// With no cloud key at all, the conversation runs on the offline models the bootstrap
// installed: an agent-only process (`likeness serve --role agent`, as an operator scales
// out) with an environment without keys. The visitor's spoken question is really
// recognised, a reply is really generated and really synthesised, and heard at the client. A
// spoken goodbye ends the session when the identity has an end_session tool (the small model
// never called it: agent/conversation/farewells.ts tells a farewell by a rule).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { GOODBYES } from '../../agent/conversation/tools.ts';
import { CHAT_TOPIC } from '../../src/contract/index.ts';
import { createTool } from '../support/created-tool.ts';
import { type IdentityBody, identityForm } from '../support/forms.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import type { TestAccount } from '../support/service.ts';
import { sessionMetricsOnce } from '../support/session-metrics.ts';
import { postSessionStart } from '../support/session-start.ts';
import { microphoneAndEars } from '../support/talking-visitor.ts';
import { eventually, joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';
import { type Microphone, speech } from '../support/voice.ts';

// No proper noun: through Opus on a loaded machine tiny.en hears "Paris" as "pairs" or "pair us".
const QUESTION = 'What time does the museum open today?';

describe('the voice agent on the offline models', () => {
  let offline: OfflineAgentService;
  let account: TestAccount;

  beforeAll(async () => {
    offline = await startOfflineAgentService('offline-agent');
    ({ account } = offline);
  }, 120_000);

  // The last session's job may still write its summary: nothing here reads it.
  afterAll(() => offline?.stop({ jobs: 'kill' }));

  test(
    'a spoken question is recognised, answered and spoken back, with no key set',
    () =>
      offline.explained(async () => {
        const created = await account.call('POST', '/v1/identities', {
          body: await identityForm({
            language: 'en',
            prompt: 'You are Ada, a friendly tour guide in Paris. Answer in one short sentence.',
          }),
        });
        const identity = (await created.json()) as IdentityBody;
        const started = await postSessionStart(account, { identity_id: identity.identity_id, visual_awareness: false });
        const session = (await started.json()) as StartedSession;
        const joinedAt = performance.now();
        const visitor = await joinAsVisitor(session);
        const { microphone, ears } = await microphoneAndEars(visitor, 60_000, "the avatar's audio");
        try {
          const greeting = await eventually(() => ears.soundAfter(joinedAt), 60_000, 'the offline greeting');
          await eventually(() => ears.silenceAfter(greeting, 600), 60_000, 'the end of the greeting');

          // The Piper voice asks: Whisper tiny.en heard espeak-ng's robot through Opus badly on a
          // loaded CI machine ("But is not when we're liking Paris today?").
          const spoken = await microphone.say(await speech(QUESTION, { voice: 'piper' }));
          const replied = await eventually(() => ears.soundAfter(spoken.endedAt), 60_000, 'the offline reply');
          console.log(
            `offline: first reply audio ${Math.round(replied - spoken.endedAt)} ms after the question's audio ended`,
          );
          await eventually(() => ears.silenceAfter(replied, 600), 60_000, 'the end of the reply');

          const transcript = await eventually(
            async () => {
              const body = (await (
                await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)
              ).json()) as {
                turns: { role: string; text: string; language: string | null }[];
              };
              const user = body.turns.find((t) => t.role === 'user');
              return user && body.turns.filter((t) => t.role === 'agent').length >= 2 ? body : undefined;
            },
            30_000,
            'the transcript',
          );
          console.log(`offline transcript: ${JSON.stringify(transcript.turns)}`);
          // Whisper really heard the question: most of its words, through Opus and a resampler,
          // and what it is about.
          // (On a crowded machine the question's pause may end a turn: "What time?" "Does the museum
          // open today?". Segmentation is not what this checks: every visitor turn counts.)
          const heard = new Set(
            transcript.turns
              .filter((t) => t.role === 'user')
              .map((t) => t.text)
              .join(' ')
              .toLowerCase()
              .match(/\p{L}+/gu) ?? [],
          );
          const asked = ['what', 'time', 'does', 'the', 'museum', 'open', 'today'];
          expect(asked.filter((word) => heard.has(word)).length).toBeGreaterThanOrEqual(5);
          expect(heard.has('museum')).toBe(true);
          // The identity's greeting, then the reply model's real answer: not empty, not the greeting again.
          const said = transcript.turns.filter((t) => t.role === 'agent').map((t) => t.text);
          expect(said[0]).toBe("Hi, I'm Ada, a friendly tour guide in Paris. How can I help you today?");
          expect(said[1]!.split(/\s+/).length).toBeGreaterThanOrEqual(2);
          expect(said[1]).not.toBe(said[0]);
          // Piper really spoke it: the reply was heard for a while, not a click.
          const loud = ears.levels.filter((level) => level.at >= replied && level.rms > 300);
          expect(loud.length * 10).toBeGreaterThan(500);
          // The session's metrics name the offline models and measured the reply (docs/api.md#session-metrics).
          const metrics = await sessionMetricsOnce(account, session.room_name, (m) => m.turns >= 1);
          console.log(`offline metrics: ${JSON.stringify(metrics)}`);
          expect(metrics.providers).toEqual({ stt: 'offline', llm: 'offline', tts: 'offline' });
          expect(metrics.voice_to_voice_ms.p50).toBeGreaterThan(0);
          expect(metrics.fps).toBeGreaterThan(10);
        } finally {
          ears.close();
          await microphone.stop();
          await account.call('POST', `/v1/sessions/${session.room_name}/end`);
          await visitor.leave().catch(() => undefined);
        }
      }),
    240_000,
  );

  /** A session of an identity with an end_session tool, its greeting heard; `takeLeave` says goodbye. */
  async function goodbyeEnds(
    language: 'en' | 'es',
    takeLeave: (visitor: Visitor, microphone: Microphone) => Promise<unknown>,
  ): Promise<{ ended: string; turns: { role: string; text: string }[] }> {
    const { tool_id } = await createTool(account, {
      name: `end_call_${language}`,
      type: 'end_session',
      description: 'Ends the call.',
    });
    const prompt =
      language === 'en' ? 'You are Ada, a friendly tour guide in Paris.' : 'Eres Ada, guía turística en Sevilla.';
    const identity = (await (
      await account.call('POST', '/v1/identities', {
        // Spanish needs a multilingual voice (an English-only one is refused for it).
        body: await identityForm({ language, prompt, voice_id: language === 'en' ? undefined : 'adam' }),
      })
    ).json()) as IdentityBody;
    const started = await postSessionStart(account, {
      identity_id: identity.identity_id,
      avatar_enabled: false,
      tool_ids: [tool_id],
    });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const joinedAt = performance.now();
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    const { microphone, ears } = await microphoneAndEars(visitor, 60_000);
    try {
      const greeting = await eventually(() => ears.soundAfter(joinedAt), 60_000, 'the offline greeting');
      await eventually(() => ears.silenceAfter(greeting, 600), 60_000, 'the end of the greeting');
      await takeLeave(visitor, microphone);
      const ended = await eventually(
        async () => {
          const body = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
            end_reason: string | null;
          };
          return body.end_reason ?? undefined;
        },
        60_000,
        'the session to end',
      );
      const { turns } = (await (await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)).json()) as {
        turns: { role: string; text: string }[];
      };
      console.log(`offline goodbye (${language}) transcript: ${JSON.stringify(turns)}`);
      return { ended, turns: turns.filter((t) => t.role !== 'tool') };
    } finally {
      ears.close();
      await microphone.stop();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }

  test(
    "a spoken goodbye ends the session through the identity's end_session tool, with no reply of the model's",
    () =>
      offline.explained(async () => {
        const { ended, turns } = await goodbyeEnds('en', async (_visitor, microphone) =>
          microphone.say(await speech('Thank you, goodbye.', { voice: 'piper' })),
        );
        expect(ended).toBe('agent_ended');
        // The visitor's goodbye, then the agent's: no reply of the model's between them. (Whisper
        // may hear "Thank you." and "Goodbye." as two turns: the first then gets its reply.)
        expect(turns.slice(-2).map((t) => t.role)).toEqual(['user', 'agent']);
        expect(turns.at(-2)!.text.toLowerCase()).toMatch(/bye/);
        expect(turns.at(-1)!.text).toBe(GOODBYES.en);
      }),
    180_000,
  );

  test(
    'a typed goodbye in Spanish ends it too, said in Spanish',
    () =>
      offline.explained(async () => {
        const { ended, turns } = await goodbyeEnds('es', (visitor) =>
          visitor.room.localParticipant!.sendText('Vale, gracias. ¡Adiós!', { topic: CHAT_TOPIC }),
        );
        expect(ended).toBe('agent_ended');
        expect(turns.map((t) => t.role)).toEqual(['agent', 'user', 'agent']);
        expect(turns[1]!.text).toBe('Vale, gracias. ¡Adiós!');
        expect(turns[2]!.text).toBe(GOODBYES.es);
        // Warm processes with the models loaded (~1.1 GB) are no memory warning (JOB_MEMORY_WARN_MB).
        expect(offline.agentOutput()).not.toContain('memory usage is above the warning threshold');
      }),
    180_000,
  );
});
