// bench/knowledge/voice: what retrieval adds to a spoken turn. The bench's documents are
// uploaded (retrieval.ts), then two sessions of the same identity, one without documents and one
// with all of them, are asked the same English questions of questions.json by a visitor over a
// real LiveKit server and WebRTC (as bench/conversation does). Reported, for each session:
// voice-to-voice (end of the question's voice → first reply audio at the client), and for the
// session with documents the retrieval as the job sees it: its POST /internal/sessions/{id}/knowledge
// round trips, timed by a pass-through proxy the job's internal URL points at (INTERNAL_URL).
//   LIKENESS_LIVEKIT_BIN=$(ls ~/.cache/likeness/livekit-server-*/livekit-server) \
//     bun bench/knowledge/voice.ts [--providers fakes|offline] [--turns 10]
//   --providers fakes    the wire fakes with bench/conversation's fixed latencies; the OpenAI
//                        fake answers from the passages in its request (passage-responder.ts)
//   --providers offline  the offline models (no keys), as `npm start` runs them
// The question's embedding is always the offline multilingual-e5-small (KNOWLEDGE_EMBEDDINGS=offline).
import { parseArgs } from 'node:util';
import { TrackKind } from '@livekit/rtc-node';
import { eventually, joinAsVisitor } from '../../test/support/visitor.ts';
import { Listener, Microphone, speech } from '../../test/support/voice.ts';
import { report, startLatencyFakes, trailingSilenceMs } from '../support/index.ts';
import { answerFromPassages } from './passage-responder.ts';
import { loadQuestions } from './question-set.ts';
import { openKnowledgeBench } from './retrieval.ts';

const { values } = parseArgs({
  options: {
    providers: { type: 'string', default: 'fakes' },
    turns: { type: 'string', default: '10' },
  },
});
const turns = Number(values.turns);

// The job's calls to the control plane pass through here, timed; the rest is forwarded as is.
let target = '';
const retrievals: number[] = [];
const proxy = Bun.serve({
  port: 0,
  hostname: '127.0.0.1',
  async fetch(request) {
    const url = new URL(request.url);
    const started = performance.now();
    const answer = await fetch(`${target}${url.pathname}${url.search}`, {
      method: request.method,
      headers: request.headers,
      body: request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.arrayBuffer(),
    });
    const body = await answer.arrayBuffer();
    if (request.method === 'POST' && url.pathname.endsWith('/knowledge')) retrievals.push(performance.now() - started);
    const headers = new Headers(answer.headers);
    headers.delete('content-encoding');
    headers.delete('content-length');
    return new Response(body, { status: answer.status, headers });
  },
});

const fakes = values.providers === 'fakes' ? await startLatencyFakes() : undefined;
if (fakes) {
  // The same first sentence in both sessions: the voice starts on a reply's first sentence, and
  // the fake streams a word per 20 ms, so a longer first sentence alone would delay it.
  fakes.openai.respond((chat) => `Sure. ${answerFromPassages(chat, 'en')}`);
  // Agent jobs are forked from this process: they inherit these.
  Object.assign(process.env, fakes.env);
} else {
  for (const name of ['DEEPGRAM_API_KEY', 'OPENAI_API_KEY', 'OPENAI_BASE_URL', 'ELEVENLABS_API_KEY'])
    delete process.env[name];
}

const questions = (await loadQuestions()).filter((q) => q.language === 'en' && q.expect_document !== null);
const knowledge = await openKnowledgeBench({
  agent: true,
  env: { INTERNAL_URL: `http://127.0.0.1:${proxy.port}` },
});
target = knowledge.bench.service.url;
const { service } = knowledge.bench;
const { account } = knowledge;
const { authorization } = account;
interface Turn {
  role: string;
  text: string;
  document_ids?: string[];
}
try {
  console.log(
    `providers=${values.providers} turns=${turns} ${knowledge.describe()} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`,
  );
  const identityId = await account.createIdentity({
    prompt: 'You are Sam, a friendly assistant who answers visitors\u2019 questions. Answer in one short sentence.',
  });
  const results: Record<string, { voiceToVoice: number[]; requestBeforeEnd: number[]; transcript: Turn[] }> = {};
  for (const withDocuments of [false, true]) {
    const label = withDocuments ? 'with documents' : 'without documents';
    const measured = await converse(identityId, withDocuments ? knowledge.documentIds : []);
    results[label] = measured;
  }
  console.log('');
  for (const [label, { voiceToVoice, requestBeforeEnd }] of Object.entries(results)) {
    report(`voice-to-voice, ${label}`, voiceToVoice, { width: 48, digits: 0 });
    if (fakes) report(`  LLM request sent before the end of speech by`, requestBeforeEnd, { width: 48, digits: 0 });
  }
  report('retrieval round trip at the job (POST …/knowledge)', retrievals, { width: 48, digits: 1 });
  const p50 = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
  const grows = p50(results['with documents']!.voiceToVoice) - p50(results['without documents']!.voiceToVoice);
  console.log(
    `a turn's voice-to-voice grows by ${Math.round(grows)} ms p50 with documents (retrieval p50 ${p50(retrievals).toFixed(1)} ms)`,
  );
  for (const [label, { transcript }] of Object.entries(results)) {
    console.log(`\n${label}:`);
    for (const turn of transcript)
      console.log(
        `  ${turn.role}: ${turn.text}${turn.document_ids?.length ? `  [documents: ${turn.document_ids.length}]` : ''}`,
      );
  }
} finally {
  await knowledge.stop();
  await fakes?.stop();
  proxy.stop(true);
}
// The visitors' native handles would keep the process alive.
process.exit(0);

async function converse(identityId: string, documentIds: string[]) {
  const response = await account.post('/v1/sessions/start', {
    identity_id: identityId,
    visual_awareness: false,
    document_ids: documentIds,
  });
  if (!response.ok) throw new Error(`session start: ${response.status} ${await response.text()}`);
  const session = (await response.json()) as { room_name: string; token: string; rtc_url: string };
  const visitor = await joinAsVisitor(session, { audioOnly: true });
  const microphone = await Microphone.publish(visitor.room);
  const ears = new Listener(
    await eventually(() => visitor.tracks.find((t) => t.kind === TrackKind.KIND_AUDIO), 60_000, 'the agent audio'),
  );
  const voiceToVoice: number[] = [];
  const requestBeforeEnd: number[] = [];
  const epoch = (at: number) => performance.timeOrigin + at;
  try {
    const greeting = await eventually(() => ears.soundAfter(0), 60_000, 'the greeting');
    await eventually(() => ears.silenceAfter(greeting, 500), 60_000, 'the end of the greeting');
    for (let turn = 0; turn < turns; turn++) {
      const question = questions[turn % questions.length]!;
      const audio = await speech(question.text);
      fakes?.deepgram.script({ transcript: question.text, language: 'en' });
      const spoken = await microphone.say(audio);
      const voiceEnd = spoken.endedAt - trailingSilenceMs(audio);
      const replied = await eventually(() => ears.soundAfter(spoken.endedAt), 60_000, 'the reply');
      voiceToVoice.push(replied - voiceEnd);
      if (fakes) requestBeforeEnd.push(epoch(voiceEnd) - fakes.openai.chats.at(-1)!.at);
      await eventually(() => ears.silenceAfter(replied, 600), 60_000, 'the end of the reply');
      await Bun.sleep(500);
    }
    await Bun.sleep(1_500);
    const transcript = (await (
      await fetch(`${service.url}/v1/sessions/${session.room_name}/transcript`, { headers: { authorization } })
    ).json()) as { turns?: Turn[] };
    return { voiceToVoice, requestBeforeEnd, transcript: transcript.turns ?? [] };
  } finally {
    ears.close();
    await microphone.stop();
    await account.post(`/v1/sessions/${session.room_name}/end`);
    await visitor.leave().catch(() => undefined);
  }
}
