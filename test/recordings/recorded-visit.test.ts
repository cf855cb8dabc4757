// A recorded visit end to end (issue 43's proof), on Postgres: a real LiveKit, an agent worker on
// the offline models in a process of its own, an rtc-node visitor who speaks, the service's store
// on the run's real S3 server. After the end the recording becomes `ready`; its file, fetched from
// its link, shows what recorded-visit-checks.ts asserts (H.264 at the session's size and AAC, the
// visit's length, both voices, the mouth with the agent's audio); Chromium plays it in a <video>
// whose frames change and whose duration matches. The same visit on PGlite, the cloud plugins and
// the local file store: recorded-visit-local.test.ts.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { rm } from 'node:fs/promises';
import { avatarFrameSize, avatarShapeFor } from '../../src/contract/index.ts';
import { launchBrowser } from '../support/browser.ts';
import { type OfflineAgentService, startOfflineAgentService } from '../support/offline-agent.ts';
import { freshBucket, type TestBucket } from '../support/s3.ts';
import { createIdentity, postSessionStart } from '../support/session-start.ts';
import { microphoneAndEars } from '../support/talking-visitor.ts';
import { eventually, joinAsVisitor, type StartedSession } from '../support/visitor.ts';
import { speech } from '../support/voice.ts';
import { expectRecordedVisit, fetchReadyRecording } from './recorded-visit-checks.ts';

const QUESTION = 'What time does the museum open today?';
const NOTICE = 'This conversation is recorded.';

describe('a recorded visit (Postgres, S3, the offline models)', () => {
  let offline: OfflineAgentService;
  let bucket: TestBucket;

  beforeAll(async () => {
    bucket = await freshBucket();
    offline = await startOfflineAgentService('recorded-visit', {
      engine: 'postgres',
      env: { RECORDING_FINISH_WAIT_SECONDS: '5', RECORDING_SWEEP_INTERVAL_SECONDS: '1', ...bucket.env() },
    });
  }, 120_000);
  afterAll(() => offline?.stop());

  test(
    'is one MP4 of what the visitor saw and both voices, in sync, that a browser plays',
    () =>
      offline.explained(async () => {
        const { account } = offline;
        const identity = await createIdentity(account, {
          language: 'en',
          prompt: 'You are Ada, a friendly tour guide in Paris. Answer in one short sentence.',
        });
        const started = await postSessionStart(account, {
          identity_id: identity.identity_id,
          visual_awareness: false,
          record: true,
          recording_notice: NOTICE,
        });
        expect(started.status).toBe(200);
        const session = (await started.json()) as StartedSession;
        // Wall-clock times of this process's performance.now() readings.
        const wallOf = (at: number) => performance.timeOrigin + at;
        const joinedAt = performance.now();
        const visitor = await joinAsVisitor(session);
        const { microphone, ears } = await microphoneAndEars(visitor, 60_000, "the avatar's audio");
        let question: { startedAt: number; endedAt: number };
        let reply: { from: number; to: number };
        let greeting: { from: number; to: number };
        try {
          // The notice, then the greeting: both spoken before the visitor asks.
          const greetingFrom = await eventually(() => ears.soundAfter(joinedAt), 60_000, 'the notice');
          const agentTurns = await eventually(
            async () => {
              const { turns } = (await (
                await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)
              ).json()) as { turns: { role: string; text: string }[] };
              const said = turns.filter((turn) => turn.role === 'agent').map((turn) => turn.text);
              return said.length >= 2 ? said : undefined;
            },
            60_000,
            'the notice and the greeting in the transcript',
          );
          expect(agentTurns[0]).toBe(NOTICE);
          const greetingTo = await eventually(() => ears.silenceAfter(greetingFrom, 600), 60_000, 'its end');
          greeting = { from: greetingFrom, to: greetingTo };
          question = await microphone.say(await speech(QUESTION, { voice: 'piper' }));
          const replyFrom = await eventually(() => ears.soundAfter(question.endedAt), 60_000, 'the reply');
          const replyTo = await eventually(() => ears.silenceAfter(replyFrom, 600), 60_000, 'its end');
          reply = { from: replyFrom, to: replyTo };
          await Bun.sleep(500);
        } finally {
          ears.close();
          await microphone.stop();
          await account.call('POST', `/v1/sessions/${session.room_name}/end`);
          await visitor.leave().catch(() => undefined);
        }
        // The visitor's turn spans their speech (its captions show while they speak), not the
        // moment its words were recognised.
        const { turns } = (await (
          await account.call('GET', `/v1/sessions/${session.room_name}/transcript`)
        ).json()) as { turns: { role: string; started_at: string; ended_at: string }[] };
        const visitorTurn = turns.find((turn) => turn.role === 'user')!;
        const askedFrom = Date.parse(visitorTurn.started_at);
        console.log(
          `recorded visit: the visitor's turn ${askedFrom - wallOf(question!.startedAt)} ms from their speech's start, ${Date.parse(visitorTurn.ended_at) - askedFrom} ms long (spoken ${Math.round(question!.endedAt - question!.startedAt)} ms)`,
        );
        expect(Math.abs(askedFrom - wallOf(question!.startedAt))).toBeLessThan(1_500);
        expect(Date.parse(visitorTurn.ended_at) - askedFrom).toBeGreaterThan(1_000);
        const path = `/tmp/likeness-recorded-visit-${process.pid}.mp4`;
        const { recording, streamedAt, endedAt } = await fetchReadyRecording(account, session.room_name, path);
        try {
          // Kept in the S3 bucket; its chunks are removed once it is ready (just after).
          const ours = async () =>
            (await bucket.keys()).filter((key) => key.includes(`recordings/${session.room_name}/`));
          await eventually(async () => (await ours()).length === 1, 15_000, "the recording's chunks removed");
          expect(await ours()).toEqual([
            expect.stringMatching(new RegExp(`recordings/${session.room_name}/recording\\.mp4$`)),
          ]);
          const size = avatarFrameSize(avatarShapeFor(null, true));
          const duration = await expectRecordedVisit(
            {
              path,
              streamedAt,
              endedAt,
              recording,
              size,
              greeting: greeting!,
              question: { from: question!.startedAt, to: question!.endedAt },
              reply: reply!,
            },
            'recorded visit',
          );

          // A browser plays it: duration as ffprobe reads it, time advancing, frames that change.
          const browser = await launchBrowser();
          try {
            const { page } = await browser.newPage();
            await page.goto(recording.download_url!);
            const played = await page.evaluate(async () => {
              const video = document.querySelector('video')!;
              video.muted = true;
              if (video.readyState < 1)
                await new Promise((resolve) => video.addEventListener('loadedmetadata', resolve));
              const grab = async (time: number) => {
                video.currentTime = time;
                await new Promise((resolve) => video.addEventListener('seeked', resolve, { once: true }));
                const canvas = document.createElement('canvas');
                canvas.width = 128;
                canvas.height = 128;
                const context = canvas.getContext('2d')!;
                context.drawImage(video, 0, 0, 128, 128);
                return Array.from(context.getImageData(0, 0, 128, 128).data);
              };
              // Several moments, as one pair may fall on two still idle frames: the most any
              // of them differs from the first.
              const first = await grab(0.5);
              let differing = 0;
              for (const share of [0.25, 0.5, 0.75, 0.9]) {
                const later = await grab(video.duration * share);
                let changed = 0;
                for (let i = 0; i < first.length; i++) if (Math.abs(first[i]! - later[i]!) > 8) changed++;
                differing = Math.max(differing, changed);
              }
              video.currentTime = 0;
              await video.play();
              await new Promise((resolve) => setTimeout(resolve, 1000));
              return { duration: video.duration, playedTo: video.currentTime, differing, width: video.videoWidth };
            });
            console.log(`recorded visit in Chromium: ${JSON.stringify(played)}`);
            expect(Math.abs(played.duration - duration)).toBeLessThan(0.5);
            expect(played.playedTo).toBeGreaterThan(0.3);
            expect(played.differing).toBeGreaterThan(0);
            expect(played.width).toBe(size.width);
          } finally {
            await browser.close();
          }
        } finally {
          await rm(path, { force: true });
        }
      }),
    300_000,
  );
});
