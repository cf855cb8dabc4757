// What the job reports of each agent turn (agent/conversation/quality.ts): the greeting is no
// reply; a reply carries agents' own voice-to-voice measure, or the sum of its stages where
// there is none; the stages come from the visitor's turn and the reply; frames are counted
// between reports; every report is valid for the control plane's schema.
import { expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { TurnQuality } from '../../agent/conversation/quality.ts';
import { JobReport, type TurnMetricsReport } from '../../src/contract/index.ts';

const PROVIDERS = { stt: 'offline', llm: 'offline', tts: 'elevenlabs' };

function harness(options: { face?: boolean } = {}) {
  const sent: TurnMetricsReport[] = [];
  let frames = 100;
  let watchedMs = 1_000;
  const quality = new TurnQuality({
    reporter: async (report) => {
      sent.push(report);
      return 'accepted';
    },
    providers: PROVIDERS,
    videoTally: options.face === false ? undefined : () => ({ frames, watchedMs }),
    logger: { warn: () => {} },
  });
  /** `ms` watched, `published` frames drawn meanwhile. */
  const pass = (ms: number, published: number) => {
    watchedMs += ms;
    frames += published;
  };
  return { quality, sent, pass };
}

test('the greeting, then a reply: measured voice-to-voice, the stages, the frames since the previous report', async () => {
  const { quality, sent, pass } = harness();
  pass(4_000, 100);
  quality.agentTurn({ id: 'greeting', interrupted: false, metrics: { ttsNodeTtfb: 0.21, startedSpeakingAt: 10 } });
  pass(6_000, 144);
  quality.visitorTurn({ stoppedSpeakingAt: 20, transcriptionDelay: 0.18, endOfTurnDelay: 0.62 });
  quality.agentTurn({
    id: 'reply',
    interrupted: true,
    metrics: { llmNodeTtft: 0.35, ttsNodeTtfb: 0.2, e2eLatency: 1.2345 },
  });
  await quality.close();
  expect(sent).toEqual([
    {
      type: 'turn_metrics',
      turn_id: 'greeting',
      reply: false,
      voice_to_voice_ms: null,
      stages: { stt_ms: null, eou_ms: null, llm_ttft_ms: null, tts_ttfb_ms: 210 },
      interrupted: false,
      providers: PROVIDERS,
      video: { frames: 100, seconds: 4 },
    },
    {
      type: 'turn_metrics',
      turn_id: 'reply',
      reply: true,
      voice_to_voice_ms: 1235,
      stages: { stt_ms: 180, eou_ms: 620, llm_ttft_ms: 350, tts_ttfb_ms: 200 },
      interrupted: true,
      providers: PROVIDERS,
      video: { frames: 144, seconds: 6 },
    },
  ]);
  for (const report of sent) expect(Value.Check(JobReport, report)).toBe(true);
});

test('without agents’ own measure a reply is estimated from its stages; a turn is answered once; no face, no video', async () => {
  const { quality, sent } = harness({ face: false });
  quality.visitorTurn({ transcriptionDelay: 0.1, endOfTurnDelay: 0.5 });
  quality.agentTurn({ id: 'a', interrupted: false, metrics: { llmNodeTtft: 0.3, ttsNodeTtfb: 0.2 } });
  // Said again with no new question from the visitor: not a reply.
  quality.agentTurn({
    id: 'b',
    interrupted: false,
    metrics: { llmNodeTtft: 0.3, ttsNodeTtfb: 0.2, e2eLatency: Number.NaN },
  });
  // A stage missing: no estimate.
  quality.visitorTurn({ transcriptionDelay: 0.1 });
  quality.agentTurn({ id: 'c', interrupted: false, metrics: { llmNodeTtft: 0.3, ttsNodeTtfb: 0.2 } });
  await quality.close();
  expect(sent.map((r) => [r.turn_id, r.reply, r.voice_to_voice_ms, r.video])).toEqual([
    ['a', true, 1000, null],
    ['b', false, null, null],
    ['c', true, null, null],
  ]);
});

test('a report the control plane cannot take now is tried again, and close() waits for it', async () => {
  let attempts = 0;
  const quality = new TurnQuality({
    reporter: async () => (++attempts < 2 ? 'retry' : 'accepted'),
    providers: PROVIDERS,
    logger: { warn: () => {} },
  });
  quality.agentTurn({ id: 'x', interrupted: false, metrics: {} });
  await quality.close();
  expect(attempts).toBe(2);
});

test('closing: a session that ended during its greeting still reports its providers and frames; frames after the last turn are reported', async () => {
  const early = harness();
  early.pass(1_500, 37);
  await early.quality.close();
  expect(early.sent.map((r) => [r.turn_id, r.reply, r.providers, r.video])).toEqual([
    ['closing', false, PROVIDERS, { frames: 37, seconds: 1.5 }],
  ]);
  expect(Value.Check(JobReport, early.sent[0])).toBe(true);

  const later = harness();
  later.pass(2_000, 50);
  later.quality.agentTurn({ id: 'greeting', interrupted: false, metrics: {} });
  later.pass(3_000, 75);
  await later.quality.close();
  expect(later.sent.map((r) => [r.turn_id, r.video])).toEqual([
    ['greeting', { frames: 50, seconds: 2 }],
    ['closing', { frames: 75, seconds: 3 }],
  ]);

  // Nothing new since the last turn: no closing report.
  const quiet = harness({ face: false });
  quiet.quality.agentTurn({ id: 'only', interrupted: false, metrics: {} });
  await quiet.quality.close();
  expect(quiet.sent.map((r) => r.turn_id)).toEqual(['only']);
});
