// bench/orders: directing a running session (docs/api.md#sessions-direct) as its visitor hears
// it: p50/p95 of a `say` call → the said audio's first sound at an rtc-node visitor (targets:
// ≤ 400 ms with the wire fakes, ≤ 700 ms offline), and of an `interrupt` call, while the avatar
// speaks, → silence at the visitor (its last loud 10 ms; target p50 ≤ 250 ms). One avatar session
// with the agent worker in the process; each sample waits for quiet first.
//   node src/bootstrap/index.mjs bench bench/orders/index.ts [--rounds 20] [--providers offline|fakes]
// (`offline`, the default: no key, the offline models; `fakes`: the cloud providers' wire fakes,
// ElevenLabs' first audio 100 ms after its text, as bench/conversation sets them.)
import { parseArgs } from 'node:util';
import { type RemoteTrack, TrackKind } from '@livekit/rtc-node';
import { AGENT_STATE_ATTRIBUTE } from '../../src/contract/index.ts';
import { startProviderFakes } from '../../test/support/fakes/index.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../../test/support/visitor.ts';
import { Listener } from '../../test/support/voice.ts';
import { createBenchAccount, FAKE_LATENCY, report, startBenchService } from '../support/index.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '20' },
    providers: { type: 'string', default: 'offline' },
  },
});
const rounds = Number(values.rounds);
if (values.providers === 'fakes') {
  const fakes = await startProviderFakes();
  fakes.elevenlabs.firstAudioDelayMs = FAKE_LATENCY.firstAudioMs;
  Object.assign(process.env, fakes.env);
} else {
  for (const key of ['DEEPGRAM_API_KEY', 'OPENAI_API_KEY', 'ELEVENLABS_API_KEY']) delete process.env[key];
}

const bench = await startBenchService({ agent: true, env: { CREDITS_ONBOARDING: '0' } });
const { service } = bench;
try {
  const { post, createIdentity } = await createBenchAccount(service);
  const identityId = await createIdentity();
  const session = (await (
    await post('/v1/sessions/start', { identity_id: identityId, idle_timeout_seconds: 0 })
  ).json()) as StartedSession;
  let ears: Listener | undefined;
  const visitor = await joinAsVisitor(session, {
    audioOnly: true,
    onTrack: (track: RemoteTrack) => {
      if (track.kind === TrackKind.KIND_AUDIO) ears = new Listener(track);
    },
  });
  const agent = await eventually(() => visitor.agent(), 60_000, 'the agent');
  await eventually(() => agent.attributes[AGENT_STATE_ATTRIBUTE] === 'listening', 120_000, 'the conversation');
  const quiet = async () => {
    const from = performance.now();
    await eventually(() => ears?.silenceAfter(from, 400) !== undefined, 60_000, 'quiet');
  };
  const order = async (path: string, body?: unknown) => {
    for (;;) {
      const answer = await post(`/v1/sessions/${session.room_name}/${path}`, body);
      if (answer.status === 200) return;
      // Before the conversation has started (the greeting, the models loading): again.
      if (answer.status !== 409 && answer.status !== 503)
        throw new Error(`${path}: ${answer.status} ${await answer.text()}`);
      await Bun.sleep(500);
    }
  };

  const toSound: number[] = [];
  const toAnswer: number[] = [];
  const toSilence: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await quiet();
    const saidAt = performance.now();
    await order('say', { text: `Your order number ${round + 1} has shipped and will arrive on Thursday morning.` });
    toAnswer.push(performance.now() - saidAt);
    toSound.push((await eventually(() => ears?.soundAfter(saidAt), 20_000, 'the said audio')) - saidAt);
    // Well into the sentence, then stopped.
    await Bun.sleep(800);
    const stopAt = performance.now();
    await order('interrupt');
    toSilence.push((await eventually(() => ears?.silenceAfter(stopAt, 300), 20_000, 'silence')) - stopAt);
  }
  console.log(`orders, ${values.providers} providers, ${rounds} rounds, one avatar session:`);
  report('say call → first audio at the visitor', toSound);
  report('say call → its answer (the agent took it)', toAnswer);
  report('interrupt call → silence at the visitor', toSilence);
  ears?.close();
  await visitor.leave();
  await post(`/v1/sessions/${session.room_name}/end`);
} finally {
  await bench.stop();
}
process.exit(0);
