// bench/conversation: voice-to-voice latency, from the end of the visitor's speech to the
// first reply audio at the visitor's client, over a real LiveKit server and WebRTC.
//   --providers fakes    wire fakes with fixed latencies: what remains beyond their time and
//                        the configured endpointing delay is our own overhead
//   --providers offline  the offline models (no keys), as `npm start` runs them
// The LiveKit binary is the one `npm start` or `npm test` built:
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/conversation/index.ts [--providers fakes|offline] [--turns 10] [--voice espeak|piper]
// --voice: who asks the question, espeak-ng's robot (the default) or the Piper voice.
// --greetings N: N sessions before the measured one, each joined and greeted, then ended: the
// visitor's join (the SDK's connect called) → the greeting's first audio at the client.
// --kind plain|tool|document (offline only for tool and document): the identity has a webhook
// tool (its receiver answers in 50 ms) or a document, the question needs it, and the answer's
// first words (the first caption that says the tool's result or the passage) are timed too.
// --language en|es: the identity's, the question's (espeak-ng's voice of that language).
// --visual-awareness: sessions with it on, as they start by default with an identity (off
// otherwise, as the figures recorded before 12-04 were measured).
import { parseArgs } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { TOOL_FILLERS } from '../../agent/conversation/tools.ts';
import { loadProviders } from '../../src/config.ts';
import { TRANSCRIPTION_TOPIC } from '../../src/contract/index.ts';
import { identityForm } from '../../test/support/forms.ts';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { Listener, Microphone, speech } from '../../test/support/voice.ts';
import {
  FAKE_LATENCY,
  report as reportMs,
  settled,
  startBenchService,
  startLatencyFakes,
  trailingSilenceMs,
  VAD_SILENCE_MS,
} from '../support/index.ts';
import {
  BENCH_LANGUAGES,
  type BenchLanguage,
  prepareKind,
  TOOL_ANSWER_MS,
  TURN_KINDS,
  type TurnKind,
} from './turn-kinds.ts';

const { values } = parseArgs({
  options: {
    providers: { type: 'string', default: 'fakes' },
    turns: { type: 'string', default: '10' },
    voice: { type: 'string', default: 'espeak' },
    greetings: { type: 'string', default: '0' },
    kind: { type: 'string', default: 'plain' },
    language: { type: 'string', default: 'en' },
    'visual-awareness': { type: 'boolean', default: false },
  },
});
const kind = values.kind as TurnKind;
const language = values.language as BenchLanguage;
if (!TURN_KINDS.includes(kind)) throw new Error(`--kind is one of ${TURN_KINDS.join(', ')}`);
if (!BENCH_LANGUAGES.includes(language)) throw new Error(`--language is one of ${BENCH_LANGUAGES.join(', ')}`);
if (kind !== 'plain' && values.providers === 'fakes') throw new Error(`--kind ${kind} needs --providers offline`);
if (language !== 'en' && values.voice === 'piper') throw new Error('the Piper voice speaks English only');
const turnSettings = loadProviders(process.env).turns;
const useFakes = values.providers === 'fakes';

const report = (label: string, samples: number[]) => reportMs(label, samples, { width: 52, digits: 0 });

const fakes = useFakes ? await startLatencyFakes() : undefined;
if (fakes) {
  fakes.openai.respond(() => 'Sure. It is sunny and mild in Paris today.');
  // Agent jobs are forked from this process: they inherit these.
  Object.assign(process.env, fakes.env);
} else {
  for (const name of ['DEEPGRAM_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ELEVENLABS_API_KEY'])
    delete process.env[name];
}

// The tool's receiver is on loopback.
const bench = await startBenchService({
  agent: true,
  env: { CREDITS_ONBOARDING: '0', WEBHOOKS_ALLOW_PRIVATE: 'true' },
});
const { service } = bench;
try {
  console.log(
    `providers=${values.providers} kind=${kind} language=${language} voice=${values.voice} visual_awareness=${values['visual-awareness']} cpus=${navigator.hardwareConcurrency} bun=${Bun.version} turns=${JSON.stringify(turnSettings)}`,
  );
  const account = await service.services.operations.createAccount({ email: 'bench@example.com', credits: 10_000_000 });
  const authorization = `Bearer ${account.api_key}`;
  const api = (method: string, path: string, body?: BodyInit, json = false) =>
    fetch(`${service.url}${path}`, {
      method,
      headers: { authorization, ...(json && { 'content-type': 'application/json' }) },
      body,
    });
  const prepared = await prepareKind(kind, language, api);
  // Another language than English needs a multilingual voice (docs/api.md#languages): a preset one.
  const voices = (await (await api('GET', '/v1/voices')).json()) as { voice_id: string; multilingual: boolean }[];
  const voice = language === 'en' ? {} : { voice_id: voices.find((v) => v.multilingual)!.voice_id };
  const identity = (await (
    await api('POST', '/v1/identities', await identityForm({ language, ...voice, ...prepared.identityFields }))
  ).json()) as { identity_id: string };
  /** A session, its visitor joined, the greeting heard to its end: join → its first audio. */
  const greeted = async () => {
    // A replacement job process loads the offline models behind the face (agent/job.ts): a
    // visitor joining before that waits for them. Measured on a settled machine, as a visitor
    // arriving seconds after the last session would find it.
    await settled();
    const response = await fetch(`${service.url}/v1/sessions/start`, {
      method: 'POST',
      headers: { authorization, 'content-type': 'application/json' },
      body: JSON.stringify({ identity_id: identity.identity_id, visual_awareness: values['visual-awareness'] }),
    });
    if (!response.ok) throw new Error(`the session did not start: ${response.status} ${await response.text()}`);
    const session = (await response.json()) as { room_name: string; token: string; rtc_url: string };
    const joinedAt = performance.now();
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    // The agent's captions (they come with the words they name): when the answer's words are heard.
    const captions: { at: number; text: string }[] = [];
    visitor.room.registerTextStreamHandler(TRANSCRIPTION_TOPIC, (reader, from) => {
      if (from.identity !== visitor.agent()?.identity) return;
      void (async () => {
        let text = '';
        for await (const chunk of reader) {
          text += chunk;
          captions.push({ at: performance.now(), text });
        }
      })();
    });
    const microphone = await Microphone.publish(visitor.room);
    const ears = new Listener(
      await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_AUDIO), 60_000, 'the agent audio'),
    );
    const greeting = await eventually(() => ears.soundAfter(joinedAt), 60_000, 'the greeting');
    await eventually(() => ears.silenceAfter(greeting, 500), 60_000, 'the end of the greeting');
    return { session, visitor, microphone, ears, captions, joinToGreetingMs: greeting - joinedAt };
  };
  const joinToGreeting: number[] = [];
  for (let round = 0; round < Number(values.greetings); round++) {
    const earlier = await greeted();
    joinToGreeting.push(earlier.joinToGreetingMs);
    await fetch(`${service.url}/v1/sessions/${earlier.session.room_name}/end`, {
      method: 'POST',
      headers: { authorization },
    });
    earlier.ears.close();
    await earlier.microphone.stop();
    await earlier.visitor.leave();
    // The ended job's process exits and a warm one takes its place before the next join.
    await Bun.sleep(3_000);
  }
  const { session, visitor, microphone, ears, captions, joinToGreetingMs } = await greeted();
  joinToGreeting.push(joinToGreetingMs);
  report('join → first greeting audio at the client', joinToGreeting);

  const question = await speech(prepared.question, {
    voice: values.voice === 'piper' ? 'piper' : language === 'es' ? 'es' : undefined,
  });
  const voiceToVoice: number[] = [];
  const voiceToAnswer: number[] = [];
  const voiceToAnswerStart: number[] = [];
  let unanswered = 0;
  const stages: Record<string, number[]> = {};
  const stage = (name: string, ms: number | undefined) => {
    if (ms !== undefined && Number.isFinite(ms)) (stages[name] ??= []).push(ms);
  };
  const epoch = (at: number) => performance.timeOrigin + at;
  for (let turn = 0; turn < Number(values.turns); turn++) {
    fakes?.deepgram.script({ transcript: prepared.question, language });
    const spoken = await microphone.say(question);
    // The end of speech is where the audio's voice ends, not the trailing silence espeak adds.
    const voiceEnd = spoken.endedAt - trailingSilenceMs(question);
    const replied = await eventually(() => ears.soundAfter(spoken.endedAt), 60_000, 'the reply');
    voiceToVoice.push(replied - voiceEnd);
    // Epoch times, to line up with the job's `turn metrics` log lines (BENCH_LOG_LEVEL=info).
    if (process.env.BENCH_LOG_LEVEL === 'info')
      console.log(
        `turn ${turn}: voice ended at ${Math.round(epoch(voiceEnd))}, reply heard at ${Math.round(epoch(replied))}`,
      );
    if (fakes) {
      // Where the time went, from what each fake saw (epoch ms, one clock on this machine).
      const chat = fakes.openai.chats.at(-1)!;
      const context = fakes.elevenlabs.received.contexts.at(-1)!;
      // With preemptive generation the LLM request leaves on the transcript, before the turn ends.
      stage('LLM request sent before the end of speech by', epoch(voiceEnd) - chat.at);
      stage('end of speech → reply text at the TTS', context.openedAt - epoch(voiceEnd));
      stage('text at the TTS → first audio sent (fake)', context.firstAudioAt! - context.openedAt);
      stage('first audio sent → heard at the client', epoch(replied) - context.firstAudioAt!);
    }
    // A tool turn's first audio is a filler, and its answer follows a pause: the next question
    // waits for the answer's words (or 20 s), not the filler's end, or it interrupts the answer.
    const answerOf = () => captions.find((caption) => caption.at > voiceEnd && prepared.says!.test(caption.text));
    // The answer's own first words: the first caption after the question that is not the filler's.
    const filler = TOOL_FILLERS[language];
    const begun = () =>
      captions.find(
        (caption) => caption.at > voiceEnd && caption.text.trim() && !filler.startsWith(caption.text.trim()),
      );
    const answered = prepared.says
      ? await eventually(() => answerOf(), 20_000, 'the answer').catch(() => undefined)
      : undefined;
    await eventually(() => ears.silenceAfter(answered?.at ?? replied, 600), 60_000, 'the end of the reply');
    if (prepared.says) {
      if (answered) voiceToAnswer.push(answered.at - voiceEnd);
      else unanswered++;
      const first = begun();
      if (first) voiceToAnswerStart.push(first.at - voiceEnd);
    }
    await Bun.sleep(500);
  }
  report('end of speech → first reply audio at the client', voiceToVoice);
  if (prepared.says) {
    report("end of speech → the answer's first words (a caption not the filler's)", voiceToAnswerStart);
    report(`end of speech → the result's words (${prepared.says.source})`, voiceToAnswer);
    console.log(
      `answers without those words: ${unanswered} of ${values.turns}; tool calls: ${prepared.calls()} (receiver ${kind === 'tool' ? `answering in ${TOOL_ANSWER_MS} ms` : 'none'})`,
    );
  }
  for (const [name, samples] of Object.entries(stages)) report(`  ${name}`, samples);
  if (useFakes) {
    // On the critical path: the VAD's silence before it calls the speech over, the endpointing
    // delay after it, and the TTS's first audio. The LLM ran ahead (preemptive generation on
    // the transcript) and Deepgram's final arrives within the endpointing delay.
    const fixed = VAD_SILENCE_MS + turnSettings.minEndpointingDelayMs + FAKE_LATENCY.firstAudioMs;
    console.log(
      `fixed: VAD silence ${VAD_SILENCE_MS} + endpointing ${turnSettings.minEndpointingDelayMs} + first audio ${FAKE_LATENCY.firstAudioMs} = ${fixed} ms`,
    );
    report(
      'our overhead (voice-to-voice − fixed)',
      voiceToVoice.map((ms) => ms - fixed),
    );
  }
  // What was said, so a reader sees what the figures were measured on.
  const transcript = (await (
    await fetch(`${service.url}/v1/sessions/${session.room_name}/transcript`, { headers: { authorization } })
  ).json()) as {
    turns?: { role: string; text: string }[];
  };
  for (const turn of transcript.turns ?? []) console.log(`  ${turn.role}: ${turn.text}`);
  await fetch(`${service.url}/v1/sessions/${session.room_name}/end`, { method: 'POST', headers: { authorization } });
  ears.close();
  await microphone.stop();
  // A room left connected keeps rtc-node's handle, and the bench, alive after its figures.
  await visitor.leave();
  prepared.stop();
} finally {
  await bench.stop();
  await fakes?.stop();
}
// rtc-node's native handle keeps the process alive once the rooms are gone (as in bench/sessions).
process.exit(0);
