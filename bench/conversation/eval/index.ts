// bench/conversation/eval: the held-out evaluation (questions.ts) through the real room path.
// One session per language and voice, pinned to that language, with the persona identity; a
// visitor (@livekit/rtc-node) speaks each question into its microphone (Opus, the agent's VAD,
// its STT) and listens for the reply. Reported per language and voice: the recogniser's word
// error rate, answer accuracy (an expected word in the reply), replies in the wrong language,
// and voice-to-voice (end of the question's voice → first reply audio at the client).
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/conversation/eval/index.ts [--languages en,es,pl,uk] [--voices piper,espeak] [--limit N]
//       [--hesitant [--pause-ms 1000]] [--providers offline|fakes]
// --providers fakes: the cloud providers' wire fakes with fixed latencies (Deepgram hears the
// question's text, the model answers with its expected word), reporting what Likeness adds:
// voice-to-voice minus the VAD's silence, the minimum endpointing delay and the fake's first audio.
// --hesitant asks HESITANT_QUESTIONS instead, each with a pause mid-phrase, and counts cut-offs
// (the question committed in pieces, or the avatar speaking before the visitor went on).
// The providers are whatever the environment configures: no keys, the offline models.
// AGENT_TURN_DETECTION=model|vad|transcript picks the end-of-turn mode under test.
import { parseArgs } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { loadProviders } from '../../../src/config.ts';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { eventually, joinAsVisitor } from '../../../test/support/visitor.ts';
import { Listener, Microphone, speech } from '../../../test/support/voice.ts';
import {
  createBenchAccount,
  FAKE_LATENCY,
  report,
  startBenchService,
  startLatencyFakes,
  trailingSilenceMs,
  VAD_SILENCE_MS,
  voiceBounds,
} from '../../support/index.ts';
import { type EvalQuestion, HESITANT_QUESTIONS, type HesitantQuestion, PERSONA, QUESTIONS } from './questions.ts';
import { isRightAnswer, replyLanguage, wordErrorRate } from './scoring.ts';

const { values } = parseArgs({
  options: {
    languages: { type: 'string', default: 'en,es,pl,uk' },
    voices: { type: 'string', default: 'piper,espeak' },
    limit: { type: 'string' },
    hesitant: { type: 'boolean', default: false },
    'pause-ms': { type: 'string', default: '1000' },
    providers: { type: 'string', default: 'offline' },
  },
});
const languages = values.languages.split(',') as SpokenLanguage[];
const voices = values.voices.split(',');
/** espeak-ng's voice for each language; Piper speaks English only. */
const ESPEAK_VOICE: Record<SpokenLanguage, string> = { en: 'en-us', es: 'es', pl: 'pl', uk: 'uk' };
/** The default voice speaks English only: other languages need a multilingual preset. */
const MULTILINGUAL_VOICE = 'aria';
/** A reply later than this counts as none. */
const REPLY_TIMEOUT_MS = 20_000;

interface Outcome {
  question: EvalQuestion;
  heard: string;
  reply: string;
  voiceToVoiceMs: number | null;
  /** Hesitant questions: the turn ended at the pause. */
  cutOff?: boolean;
}

interface Turn {
  role: string;
  text: string;
  started_at: string;
}

/** The fake model's answer, in the question's language. */
const ANSWER_TEMPLATE: Record<SpokenLanguage, (word: string) => string> = {
  en: (w) => `It is ${w}.`,
  es: (w) => `Es ${w}.`,
  pl: (w) => `To jest ${w}.`,
  uk: (w) => `Це ${w}.`,
};
const fakes = values.providers === 'fakes' ? await startLatencyFakes() : undefined;
if (fakes) {
  const all = [...QUESTIONS, ...HESITANT_QUESTIONS];
  fakes.openai.respond((chat) => {
    const asked = chat.userTexts.at(-1) ?? '';
    const question = all.find((q) => q.text === asked || ('second' in q && (q as HesitantQuestion).second === asked));
    return question ? ANSWER_TEMPLATE[question.language](question.expect[0]!) : 'I am not sure.';
  });
  // Agent jobs are forked from this process: they inherit these.
  Object.assign(process.env, fakes.env);
}

const bench = await startBenchService({ agent: true, env: { CREDITS_ONBOARDING: '0' } });
const { service } = bench;
const providers = loadProviders(process.env);
console.log(
  `cpus=${navigator.hardwareConcurrency} bun=${Bun.version} turn_detection=${providers.turns.detection} endpointing=${providers.turns.minEndpointingDelayMs}-${providers.turns.maxEndpointingDelayMs} ms`,
);
const account = await createBenchAccount(service, 'eval@example.com');
const { authorization } = account;
const results: { label: string; outcomes: Outcome[] }[] = [];
try {
  for (const language of languages) {
    for (const voice of voices) {
      if (voice === 'piper' && language !== 'en') continue;
      const set: EvalQuestion[] = values.hesitant ? HESITANT_QUESTIONS : QUESTIONS;
      const questions = set
        .filter((question) => question.language === language)
        .slice(0, values.limit ? Number(values.limit) : undefined);
      if (questions.length === 0) continue;
      results.push({ label: `${language} (${voice})`, outcomes: await converse(language, voice, questions) });
    }
  }
} finally {
  await bench.stop();
  await fakes?.stop();
}

console.log(
  `\n| language (voice) | n | STT WER | right answers | wrong language | voice-to-voice p50 / p95 |${values.hesitant ? ` cut off at a ${values['pause-ms']} ms pause |` : ''}`,
);
console.log(`|---|---|---|---|---|---|${values.hesitant ? '---|' : ''}`);
for (const { label, outcomes } of results) {
  const wer = outcomes.reduce((sum, o) => sum + wordErrorRate(o.question.text, o.heard), 0) / outcomes.length;
  const right = outcomes.filter((o) => isRightAnswer(o.reply, o.question.expect)).length;
  const pinned = label.slice(0, 2);
  const wrong = outcomes.filter((o) => {
    const detected = replyLanguage(o.reply);
    return detected !== null && detected !== pinned;
  }).length;
  const times = outcomes.flatMap((o) => (o.voiceToVoiceMs === null ? [] : [o.voiceToVoiceMs])).sort((a, b) => a - b);
  const at = (p: number) =>
    times.length ? `${Math.round(times[Math.min(times.length - 1, Math.floor(p * times.length))]!)}` : '–';
  const cutOffs = values.hesitant ? ` ${outcomes.filter((o) => o.cutOff).length}/${outcomes.length} |` : '';
  console.log(
    `| ${label} | ${outcomes.length} | ${(wer * 100).toFixed(0)} % | ${right}/${outcomes.length} (${((right / outcomes.length) * 100).toFixed(0)} %) | ${wrong} | ${at(0.5)} / ${at(0.95)} ms |${cutOffs}`,
  );
}
for (const { label, outcomes } of results)
  report(
    `voice-to-voice ${label}`,
    outcomes.flatMap((o) => (o.voiceToVoiceMs === null ? [] : [o.voiceToVoiceMs])),
    { width: 32, digits: 0 },
  );
if (fakes) {
  const fixed = VAD_SILENCE_MS + providers.turns.minEndpointingDelayMs + FAKE_LATENCY.firstAudioMs;
  console.log(
    `fixed: VAD silence ${VAD_SILENCE_MS} + endpointing ${providers.turns.minEndpointingDelayMs} + first audio ${FAKE_LATENCY.firstAudioMs} = ${fixed} ms`,
  );
  for (const { label, outcomes } of results)
    report(
      `our overhead ${label}`,
      outcomes.flatMap((o) => (o.voiceToVoiceMs === null ? [] : [o.voiceToVoiceMs - fixed])),
      { width: 32, digits: 0 },
    );
}
// The visitors' native handles would keep the process alive.
process.exit(0);

/** One session: each question asked in turn, and what the transcript says was heard and answered. */
async function converse(language: SpokenLanguage, voice: string, questions: EvalQuestion[]): Promise<Outcome[]> {
  const identityId = await account.createIdentity({
    language,
    name: PERSONA.name,
    prompt: PERSONA.prompt,
    ...(language === 'en' ? {} : { voice_id: MULTILINGUAL_VOICE }),
  });
  const started = await account.post('/v1/sessions/start', { identity_id: identityId, visual_awareness: false });
  if (!started.ok) throw new Error(`session start for ${language}: ${started.status} ${await started.text()}`);
  const session = (await started.json()) as { room_name: string; token: string; rtc_url: string };
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const microphone = await Microphone.publish(visitor.room);
  const ears = new Listener(
    await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_AUDIO), 60_000, 'the agent audio'),
  );
  const windows: {
    question: EvalQuestion;
    from: number;
    voiceEnd: number;
    to: number;
    voiceToVoiceMs: number | null;
    spokeInPause?: boolean;
  }[] = [];
  const voiceOf = (text: string) => speech(text, { voice: voice === 'piper' ? 'piper' : ESPEAK_VOICE[language] });
  try {
    const greeting = await eventually(() => ears.soundAfter(0), 60_000, 'the greeting');
    await eventually(() => ears.silenceAfter(greeting, 700), 60_000, 'the end of the greeting');
    for (const question of questions) {
      const hesitant = 'first' in question ? (question as HesitantQuestion) : null;
      const audio = hesitant
        ? withPause(await voiceOf(hesitant.first), Number(values['pause-ms']), await voiceOf(hesitant.second))
        : { samples: await voiceOf(question.text), pauseFromMs: 0, resumeMs: 0 };
      fakes?.deepgram.script(
        ...(hesitant ? [hesitant.first, hesitant.second] : [question.text]).map((transcript) => ({
          transcript,
          language,
        })),
      );
      const from = performance.now();
      const spoken = await microphone.say(audio.samples);
      const voiceEnd = spoken.endedAt - trailingSilenceMs(audio.samples);
      // Replies to the first half alone begin before the second half does.
      const resumedAt = spoken.startedAt + audio.resumeMs;
      const spokeInPause = hesitant
        ? (ears.soundAfter(spoken.startedAt + audio.pauseFromMs) ?? Infinity) < resumedAt
        : undefined;
      const replied = await eventually(() => ears.soundAfter(spoken.endedAt), REPLY_TIMEOUT_MS, 'the reply').catch(
        () => null,
      );
      if (replied !== null)
        await eventually(() => ears.silenceAfter(replied, 700), 60_000, 'the end of the reply').catch(() => undefined);
      windows.push({
        question,
        from,
        voiceEnd,
        to: performance.now(),
        voiceToVoiceMs: replied === null ? null : replied - voiceEnd,
        spokeInPause,
      });
      await Bun.sleep(300);
    }
    // The last turns reach the transcript shortly after they end.
    await Bun.sleep(1_500);
    const body = (await (
      await fetch(`${service.url}/v1/sessions/${session.room_name}/transcript`, { headers: { authorization } })
    ).json()) as { turns: Turn[] };
    const epochOf = (turn: Turn) => Date.parse(turn.started_at) - performance.timeOrigin;
    return windows.map((window) => {
      const within = body.turns.filter((turn) => epochOf(turn) >= window.from && epochOf(turn) < window.to);
      const userTurns = within.filter((turn) => turn.role === 'user');
      const heard = userTurns.map((turn) => turn.text).join(' ');
      const reply = within
        .filter((turn) => turn.role === 'agent')
        .map((turn) => turn.text)
        .join(' ');
      const cutOff = window.spokeInPause === undefined ? undefined : window.spokeInPause || userTurns.length > 1;
      console.log(
        `${language} ${voice} | ${window.question.text} | heard: ${heard} | reply: ${reply} | ${window.voiceToVoiceMs === null ? 'no reply' : `${Math.round(window.voiceToVoiceMs)} ms`}${cutOff ? ' | CUT OFF' : ''}`,
      );
      return { question: window.question, heard, reply, voiceToVoiceMs: window.voiceToVoiceMs, cutOff };
    });
  } finally {
    ears.close();
    await microphone.stop();
    await account.post(`/v1/sessions/${session.room_name}/end`);
    await visitor.leave().catch(() => undefined);
  }
}

/** `first`, `pauseMs` of silence after its voice ends, then `second`; with where the pause starts and the voice resumes (ms from the start). */
function withPause(
  first: Int16Array,
  pauseMs: number,
  second: Int16Array,
): { samples: Int16Array; pauseFromMs: number; resumeMs: number } {
  const perMs = 48;
  const firstVoice = first.subarray(0, voiceBounds(first).end);
  const secondVoice = second.subarray(voiceBounds(second).start);
  const samples = new Int16Array(firstVoice.length + pauseMs * perMs + secondVoice.length);
  samples.set(firstVoice);
  samples.set(secondVoice, firstVoice.length + pauseMs * perMs);
  return { samples, pauseFromMs: firstVoice.length / perMs, resumeMs: firstVoice.length / perMs + pauseMs };
}
