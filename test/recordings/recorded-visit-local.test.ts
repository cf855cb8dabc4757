// A recorded visit on the other engine and the other store (issue 43's proof on both engines):
// PGlite, the service's store in local files, the cloud plugins on their wire fakes, an agent
// worker in this process, an rtc-node visitor who speaks. The recording becomes `ready`, its
// link serves the file, and the file shows what recorded-visit-checks.ts asserts. Postgres, S3,
// the offline models and Chromium playing it: recorded-visit.test.ts.
import { describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { avatarFrameSize, avatarShapeFor } from '../../src/contract/index.ts';
import { sharedProviderFakes } from '../support/preload.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { suiteVisitorService } from '../support/suite-agent-service.ts';
import { microphoneAndEars } from '../support/talking-visitor.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { speech } from '../support/voice.ts';
import { expectRecordedVisit, fetchReadyRecording, type Span } from './recorded-visit-checks.ts';

const fakes = sharedProviderFakes();
const QUESTION = 'When does the museum close tonight?';
const REPLY = 'The museum closes at nine this evening, and the last entry is at eight.';

describe('a recorded visit (PGlite, local files, the cloud plugins)', () => {
  const suite = suiteVisitorService({ RECORDING_FINISH_WAIT_SECONDS: '5', RECORDING_SWEEP_INTERVAL_SECONDS: '1' });

  test('is one MP4 of what the visitor saw and both voices, in sync, served from the local store', async () => {
    fakes.openai.respond(() => REPLY);
    const identity = await createIdentity(suite.account, {
      language: 'en',
      prompt: 'You are Ada, a guide at the Louvre.',
    });
    const started = await postSessionStart(suite.account, { identity_id: identity.identity_id, record: true });
    expect(started.status).toBe(200);
    const session = (await started.json()) as StartedSession;
    const joinedAt = performance.now();
    const visitor = await joinAsVisitor(session, { audioOnly: true });
    const { microphone, ears } = await microphoneAndEars(visitor, 30_000, "the avatar's audio");
    let greeting: Span;
    let question: Span;
    let reply: Span;
    try {
      const greetingFrom = await eventually(() => ears.soundAfter(joinedAt), 30_000, 'the greeting');
      greeting = {
        from: greetingFrom,
        to: await eventually(() => ears.silenceAfter(greetingFrom, 600), 30_000, 'its end'),
      };
      fakes.deepgram.script({ transcript: QUESTION, language: 'en' });
      const asked = await microphone.say(await speech(QUESTION));
      question = { from: asked.startedAt, to: asked.endedAt };
      const replyFrom = await eventually(() => ears.soundAfter(asked.endedAt), 30_000, 'the reply');
      reply = { from: replyFrom, to: await eventually(() => ears.silenceAfter(replyFrom, 600), 30_000, 'its end') };
      await Bun.sleep(500);
    } finally {
      ears.close();
      await microphone.stop();
      await suite.account.call('POST', `/v1/sessions/${session.room_name}/end`);
      await visitor.leave().catch(() => undefined);
    }
    const path = `/tmp/likeness-recorded-visit-local-${process.pid}.mp4`;
    const { recording, streamedAt, endedAt } = await fetchReadyRecording(suite.account, session.room_name, path);
    try {
      await expectRecordedVisit(
        {
          path,
          streamedAt,
          endedAt,
          recording,
          size: avatarFrameSize(avatarShapeFor(null, true)),
          greeting: greeting!,
          question: question!,
          reply: reply!,
        },
        'recorded visit (local)',
      );
    } finally {
      await rm(path, { force: true });
    }
  }, 180_000);
});
