// What a visitor's room token lets them publish (src/livekit/connection.ts): their microphone
// and their camera, nothing else. A screen share (or anything sent as another source) into the
// agent's room is refused by LiveKit itself, on a real server with a real WebRTC client.
import { describe, expect, test } from 'bun:test';
import {
  AudioSource,
  LocalAudioTrack,
  LocalVideoTrack,
  TrackPublishOptions,
  TrackSource,
  VideoSource,
} from '@livekit/rtc-node';
import { postSessionStart } from '../support/session-start.ts';
import { suiteServiceWithIdentity } from '../support/suite-service.ts';
import { joinAsVisitor, type StartedSession, type Visitor } from '../support/visitor.ts';

const suite = suiteServiceWithIdentity('pglite', {
  livekit: 'local',
  env: { CREDITS_ONBOARDING: '0' },
  credits: 10_000,
  identity: { language: 'en' },
});

/** Publishes one track of `source`; true when LiveKit accepted it, false when it refused it. */
async function publishes(visitor: Visitor, source: TrackSource): Promise<boolean> {
  const track =
    source === TrackSource.SOURCE_MICROPHONE || source === TrackSource.SOURCE_SCREENSHARE_AUDIO
      ? LocalAudioTrack.createAudioTrack(`t${source}`, new AudioSource(48_000, 1))
      : LocalVideoTrack.createVideoTrack(`t${source}`, new VideoSource(64, 64));
  try {
    await visitor.room.localParticipant!.publishTrack(track, new TrackPublishOptions({ source }));
    return true;
  } catch {
    return false;
  }
}

describe("a visitor's token", () => {
  test('publishes the microphone and the camera; a screen share and its audio are refused', async () => {
    const session = (await (
      await postSessionStart(suite.account, { identity_id: suite.identity.identity_id })
    ).json()) as StartedSession;
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    try {
      expect(await publishes(visitor, TrackSource.SOURCE_MICROPHONE)).toBe(true);
      expect(await publishes(visitor, TrackSource.SOURCE_CAMERA)).toBe(true);
      expect(await publishes(visitor, TrackSource.SOURCE_SCREENSHARE)).toBe(false);
      expect(await publishes(visitor, TrackSource.SOURCE_SCREENSHARE_AUDIO)).toBe(false);
      // The room holds exactly what was allowed.
      const published = await suite.service.services.livekit.rooms.listParticipants(session.room_name);
      const tracks = published.find((p) => p.identity === visitor.room.localParticipant!.identity)!.tracks;
      expect(tracks.map((t) => t.source).sort()).toEqual([1, 2]); // CAMERA, MICROPHONE (LiveKit's protocol numbers)
    } finally {
      await visitor.leave();
      await suite.account.call('POST', `/v1/sessions/${session.room_name}/end`);
    }
  }, 60_000);
});
