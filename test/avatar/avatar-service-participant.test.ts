// The second kind of pipeline: an avatar service that joins the room as its own participant.
// The example pipeline (`example-avatar-service`, examples/avatar-service) is registered on
// both sides as an operator would: the control plane's half through PIPELINE_MODULES
// (training.ts), the agent's through AGENT_PIPELINE_MODULES (agent-pipeline.ts); and its
// service (service.ts) runs in this process, a real rtc-node participant. Nothing in the session code
// knows about it: the session's agent must stream its speech there over the agents' avatar
// protocol and publish no voice of its own, while the service publishes on its behalf.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { join } from 'node:path';
import { ParticipantKind, type RemoteParticipant, TrackKind } from '@livekit/rtc-node';
import { AVATAR_SERVICE_DOWN_PIPELINE, AVATAR_SERVICE_PIPELINE } from '../../examples/avatar-service/agent-pipeline.ts';
import { type AvatarService, type ReceivedSegment, startAvatarService } from '../../examples/avatar-service/service.ts';
import { setProcessEnv } from '../support/environment.ts';
import { file, type IdentityBody, identityForm } from '../support/forms.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import type { TestAccount, TestService } from '../support/service.ts';
import { postSessionStart } from '../support/session-start.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { startVisitorService } from '../support/visitor-service.ts';
import { Listener, Microphone, speech } from '../support/voice.ts';

const fakes = sharedProviderFakes();
const EXAMPLE = join(import.meta.dir, '..', '..', 'examples', 'avatar-service');
const QUESTION = 'What is the weather like in Paris today?';
const LONG_REPLY = 'Paris has many museums and parks. '.repeat(10).trim();

let avatarService: AvatarService;
let service: TestService;
let account: TestAccount;
let restoreEnv = () => {};

beforeAll(async () => {
  avatarService = startAvatarService();
  restoreEnv = setProcessEnv({
    AGENT_PIPELINE_MODULES: join(EXAMPLE, 'agent-pipeline.ts'),
    AVATAR_SERVICE_URL: avatarService.url,
  });
  // The control plane's half, as an operator adds one.
  ({ service, account } = await startVisitorService({ PIPELINE_MODULES: join(EXAMPLE, 'training.ts') }));
});

afterAll(async () => {
  await service?.stop();
  await avatarService?.stop();
  restoreEnv();
});

const rms = (segment: ReceivedSegment) => {
  let sum = 0;
  let n = 0;
  for (const chunk of segment.samples) {
    for (const s of chunk) sum += s * s;
    n += chunk.length;
  }
  return Math.sqrt(sum / Math.max(1, n));
};

async function transcriptTurns(sessionId: string) {
  const body = (await (await account.call('GET', `/v1/sessions/${sessionId}/transcript`)).json()) as {
    turns: { role: string; text: string; interrupted: boolean }[];
  };
  return body.turns;
}

async function createIdentity(pipelineId: string, marker: string): Promise<IdentityBody> {
  const photo = file(
    new Uint8Array(await Bun.file(join(import.meta.dir, '../fixtures/astronaut.png')).arrayBuffer()),
    'astronaut.png',
    'image/png',
  );
  const created = await account.call('POST', '/v1/identities', {
    body: await identityForm({
      image: photo,
      language: 'en',
      pipeline_id: pipelineId,
      prompt: `You are Ada. Marker: ${marker}.`,
    }),
  });
  expect(created.status).toBe(200);
  const identity = (await created.json()) as IdentityBody;
  expect(identity.pipeline_id).toBe(pipelineId);
  return identity;
}

async function start(identityId: string): Promise<StartedSession> {
  const started = await postSessionStart(account, { identity_id: identityId, form_factor: 'phone' });
  expect(started.status).toBe(200);
  return (await started.json()) as StartedSession;
}

describe('a pipeline served by an avatar service (a separate participant)', () => {
  test('the agent streams its speech to the service and publishes nothing; the service publishes on its behalf', async () => {
    const identity = await createIdentity(AVATAR_SERVICE_PIPELINE, 'svc-1');

    fakes.openai.respond((request) => (request.userTexts.at(-1) === QUESTION ? LONG_REPLY : 'All right.'));
    const session = await start(identity.identity_id);
    const visitor = await joinAsVisitor(session);
    const microphone = await Microphone.publish(visitor.room);
    try {
      // The job asked the service to join this room, as its own identity, for the agent.
      const serviceSession = await eventually(
        () => avatarService.sessions.find((s) => s.request.roomName === session.room_name),
        20_000,
        'the avatar service request',
      );
      const { request } = serviceSession;
      expect(request.identity?.identity_id).toBe(identity.identity_id);
      expect(request.shape).toBe('portrait');
      expect(request.sampleRate).toBe(48_000);
      expect(request.avatarParticipantIdentity).not.toBe(request.agentParticipantIdentity);

      const participants = () => [...visitor.room.remoteParticipants.values()];
      const agent = await eventually(
        () => participants().find((p) => p.identity === request.agentParticipantIdentity),
        20_000,
        'the agent',
      );
      const avatar = await eventually(
        () =>
          participants().find((p) => p.identity === request.avatarParticipantIdentity && p.trackPublications.size >= 2),
        20_000,
        'the avatar participant with its tracks',
      );
      expect(agent.kind).toBe(ParticipantKind.AGENT);
      expect(avatar.kind).toBe(ParticipantKind.AGENT);
      expect(avatar.attributes['lk.publish_on_behalf']).toBe(agent.identity);
      const kinds = (p: RemoteParticipant) =>
        [...p.trackPublications.values()].map((t) => (t.kind === TrackKind.KIND_AUDIO ? 'audio' : 'video')).sort();
      expect(kinds(avatar)).toEqual(['audio', 'video']);

      // The greeting goes to the service as 48 kHz mono speech, the visitor hears it from the
      // service's track, and the service's playback_finished completes the agent's turn.
      const audioTrack = await eventually(
        () =>
          visitor.tracks.find(
            (t) =>
              t.kind === TrackKind.KIND_AUDIO && [...avatar.trackPublications.values()].some((p) => p.sid === t.sid),
          ),
        10_000,
        "the service's audio track",
      );
      const ears = new Listener(audioTrack);
      const greeting = await eventually(
        () => serviceSession.segments.find((s) => s.finished),
        20_000,
        'the greeting to play out',
      );
      expect(greeting.from).toBe(agent.identity);
      expect(greeting.attributes).toMatchObject({ sample_rate: '48000', num_channels: '1' });
      expect(greeting.finished).toEqual({ interrupted: false, playbackPosition: expect.any(Number) });
      expect(greeting.finished!.playbackPosition).toBeGreaterThan(1);
      expect(ears.soundAfter(0)).toBeDefined();
      const greetingTurn = await eventually(
        async () => (await transcriptTurns(session.room_name)).find((t) => t.role === 'agent'),
        10_000,
        'the greeting in the transcript',
      );
      expect(greetingTurn).toMatchObject({ text: "Hi, I'm Ada. How can I help you today?", interrupted: false });

      // An interruption: the agent clears the service's buffer, which reports the reply interrupted.
      fakes.deepgram.script({ transcript: QUESTION, language: 'en' }, { transcript: 'Stop, please.', language: 'en' });
      await microphone.say(await speech(QUESTION));
      const reply = await eventually(
        () => serviceSession.segments.find((s) => s !== greeting && rms(s) > 0),
        20_000,
        'the long reply to reach the service',
      );
      await Bun.sleep(1_500);
      expect(reply.finished).toBeUndefined(); // still playing
      await microphone.say(await speech('Stop, please. Stop.'));
      await eventually(() => serviceSession.clears.length > 0, 10_000, 'lk.clear_buffer');
      expect(serviceSession.clears[0]!.from).toBe(agent.identity);
      expect(reply.finished?.interrupted).toBe(true);
      const interrupted = await eventually(
        async () => (await transcriptTurns(session.room_name)).find((t) => t.role === 'agent' && t.interrupted),
        10_000,
        'the interrupted turn in the transcript',
      );
      expect(LONG_REPLY.startsWith(interrupted.text.slice(0, 20))).toBe(true);
      expect(interrupted.text.length).toBeLessThan(LONG_REPLY.length);

      // Never a track of the agent's own; billing started with the service's video.
      expect(agent.trackPublications.size).toBe(0);
      const details = (await (await account.call('GET', `/v1/sessions/${session.room_name}`)).json()) as {
        streaming_started_at: string | null;
      };
      expect(details.streaming_started_at).not.toBeNull();
      ears.close();
    } finally {
      await microphone.stop();
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
    // The job closes the service's session when it leaves.
    await eventually(
      () => avatarService.sessions.every((s) => s.closed),
      20_000,
      'the avatar service session to close',
    );
  }, 120_000);

  test('a service that cannot start leaves the session with the stand-in, drawn and published by the agent', async () => {
    const identity = await createIdentity(AVATAR_SERVICE_DOWN_PIPELINE, 'svc-down');
    const session = await start(identity.identity_id);
    const visitor = await joinAsVisitor(session);
    try {
      const agent = await eventually(() => visitor.agent(), 20_000, 'the agent');
      await eventually(() => agent.trackPublications.size >= 2, 20_000, 'the agent’s tracks');
      expect([...agent.trackPublications.values()].map((p) => p.name).sort()).toEqual(['avatar', 'avatar_audio']);
      expect([...visitor.room.remoteParticipants.values()].map((p) => p.identity)).toEqual([agent.identity]);
    } finally {
      await account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
  }, 60_000);
});
