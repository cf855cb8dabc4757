// The greeting voiced while the job starts (agent/conversation/prepared-greeting.ts, issue 45
// point 1): the text is the one the session will greet with (the start's own, or the
// template's), the offline voice's frames are kept in order and played back as they were made
// (their lip cues with them), a failed synthesis leaves the greeting to be synthesised when said,
// and a cloud voice is never asked ahead. Heard in a session: test/conversation/offline-conversation.
import { expect, test } from 'bun:test';
import type { tts } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import { plannedGreeting } from '../../agent/conversation/greeting.ts';
import { playable, prepareGreeting, prepareSessionGreeting } from '../../agent/conversation/prepared-greeting.ts';
import type { OfflineModels } from '../../agent/providers/offline/index.ts';
import { loadProviders } from '../../src/config.ts';
import type { ParsedDispatch } from '../../src/contract/index.ts';

const logger = { info() {} };

function frame(value: number): AudioFrame {
  const made = new AudioFrame(new Int16Array(220).fill(value), 22_050, 1, 220);
  made.userdata.cue = value;
  return made;
}

/** A voice that "says" a text as three frames, or fails. */
function voice(fail = false): { voice: tts.TTS; said: string[] } {
  const said: string[] = [];
  const speaking = {
    synthesize(text: string) {
      said.push(text);
      return (async function* () {
        if (fail) throw new Error('no voice');
        for (const value of [1, 2, 3]) yield { frame: frame(value) };
      })();
    },
  };
  return { voice: speaking as unknown as tts.TTS, said };
}

test("the greeting's frames are made once, kept in order, and played as made", async () => {
  const { voice: offline, said } = voice();
  const prepared = prepareGreeting(offline, 'Hello! How can I help you today?', logger);
  const frames = await prepared.frames;
  expect(said).toEqual(['Hello! How can I help you today?']);
  expect(frames!.map((f) => f.userdata.cue)).toEqual([1, 2, 3]);
  const played: AudioFrame[] = [];
  for await (const f of playable(frames!)) played.push(f);
  expect(played).toEqual(frames!);
});

test('a failed synthesis gives no frames: the greeting is synthesised when said', async () => {
  const { voice: broken } = voice(true);
  expect(await prepareGreeting(broken, 'Hello!', logger).frames).toBeNull();
});

test("the session's planned greeting is the one voiced; a cloud voice or no greeting is not asked ahead", async () => {
  const { voice: offline, said } = voice();
  const models = { tts: () => offline } as unknown as OfflineModels;
  // What the greeting reads of a dispatch (the rest is the job's).
  const parsed = {
    metadata: {
      language: 'en',
      voice: null,
      memory: null,
      identity: { identity_id: 'idn_1', name: 'Ada', prompt: 'You are Ada, a tour guide in Paris.' },
    } as unknown as ParsedDispatch,
  };
  const offlineSettings = loadProviders({});
  const prepared = prepareSessionGreeting(parsed.metadata, offlineSettings, models, logger);
  expect(prepared?.text).toBe(plannedGreeting(parsed.metadata));
  expect(said).toEqual([plannedGreeting(parsed.metadata)]);
  const cloud = loadProviders({ ELEVENLABS_API_KEY: 'k' });
  expect(prepareSessionGreeting(parsed.metadata, cloud, models, logger)).toBeNull();
  expect(prepareSessionGreeting({ ...parsed.metadata, greeting: '' }, offlineSettings, models, logger)).toBeNull();
  expect(said).toHaveLength(1);
});
