// Idle life (agent/pipelines/builtin/head-motion.ts): small, and different when listening.
import { expect, test } from 'bun:test';
import { HeadMotion } from '../../../agent/pipelines/builtin/head-motion.ts';
import { seededRandom } from './served-face.ts';

const FACE_HEIGHT = 300;

function tenSeconds(speaking: boolean): Array<{ dx: number; dy: number; roll: number }> {
  const motion = new HeadMotion(FACE_HEIGHT, seededRandom(3));
  // The mood settles over the first seconds; then ten seconds are measured.
  const poses = [];
  for (let frame = 0; frame < 15 * 25; frame++) {
    const pose = motion.next(frame * 40, { speaking, loudness: speaking ? 0.5 + 0.5 * Math.sin(frame) : 0 });
    if (frame >= 5 * 25) poses.push(pose);
  }
  return poses;
}

const degrees = (radians: number) => (radians * 180) / Math.PI;
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;

test('listening, the head leans to one side and nods; speaking, it sways about upright', () => {
  const listening = tenSeconds(false);
  const speaking = tenSeconds(true);
  expect(degrees(mean(listening.map((p) => p.roll)))).toBeGreaterThan(0.8);
  expect(Math.abs(degrees(mean(speaking.map((p) => p.roll))))).toBeLessThan(0.5);
  for (const poses of [listening, speaking]) {
    // Alive: it moves by a pixel or more, but subtly: a few percent of the face at most.
    const spread = (values: number[]) => Math.max(...values) - Math.min(...values);
    expect(spread(poses.map((p) => p.dx))).toBeGreaterThan(1);
    expect(spread(poses.map((p) => p.dy))).toBeGreaterThan(1);
    for (const pose of poses) {
      expect(Math.hypot(pose.dx, pose.dy)).toBeLessThan(0.03 * FACE_HEIGHT);
      expect(Math.abs(degrees(pose.roll))).toBeLessThan(2.5);
    }
  }
});

test('a stressed syllable gets a short nod, a tilt to alternate sides and a lift of the brows; accents come no closer than 450 ms', () => {
  const run = (stressedAt: (frame: number) => boolean | undefined, loudness: (frame: number) => number) => {
    const motion = new HeadMotion(FACE_HEIGHT, seededRandom(3));
    const calm = new HeadMotion(FACE_HEIGHT, seededRandom(3));
    return Array.from({ length: 100 }, (_, frame) => {
      const pose = motion.next(frame * 40, { speaking: true, loudness: loudness(frame), stressed: stressedAt(frame) });
      const without = calm.next(frame * 40, {
        speaking: true,
        loudness: loudness(frame),
        stressed: stressedAt(frame) === undefined ? undefined : false,
      });
      return { brow: pose.brow, nod: pose.dy - without.dy, tilt: degrees(pose.roll - without.roll) };
    });
  };
  // Piper's stress marks at frames 20 and 24 (160 ms apart: the second is too close) and 60.
  const marked = run(
    (frame) => frame === 20 || frame === 24 || frame === 60,
    () => 0.6,
  );
  const accented = (poses: typeof marked) =>
    poses.flatMap((pose, frame) => (pose.brow > 0 && (frame === 0 || poses[frame - 1]!.brow === 0) ? [frame] : []));
  expect(accented(marked)).toEqual([21, 61]);
  expect(Math.max(...marked.slice(20, 33).map((p) => p.brow))).toBeGreaterThan(0.5);
  expect(marked.slice(33, 60).every((p) => p.brow === 0)).toBe(true);
  // The nod: the head dips (down is +dy) by a pixel or two and comes back within a third of a second.
  expect(Math.max(...marked.slice(20, 29).map((p) => p.nod))).toBeGreaterThan(1);
  expect(Math.max(...marked.slice(20, 29).map((p) => p.nod))).toBeLessThan(0.01 * FACE_HEIGHT);
  expect(Math.abs(marked[30]!.nod)).toBeLessThan(0.01);
  // The tilt: under a degree, one way on the first accent and the other way on the next, gone with the nod.
  const tiltOf = (from: number) =>
    marked.slice(from, from + 9).reduce((most, p) => (Math.abs(p.tilt) > Math.abs(most) ? p.tilt : most), 0);
  expect(Math.abs(tiltOf(20))).toBeGreaterThan(0.2);
  expect(Math.abs(tiltOf(20))).toBeLessThan(1);
  expect(Math.sign(tiltOf(60))).toBe(-Math.sign(tiltOf(20)));
  expect(Math.abs(marked[30]!.tilt)).toBeLessThan(0.01);
  // A voice that marks no stress (undefined): a loud syllable after a quieter moment is the accent.
  const onsets = run(
    () => undefined,
    (frame) => (frame % 25 < 5 ? 0.9 : 0.2),
  );
  expect(accented(onsets).length).toBeGreaterThanOrEqual(3);
  // Listening: never.
  const listening = new HeadMotion(FACE_HEIGHT, seededRandom(3));
  for (let frame = 0; frame < 100; frame++)
    expect(listening.next(frame * 40, { speaking: false, loudness: 0, stressed: frame % 10 === 0 }).brow).toBe(0);
});

test("listening, the head nods at the visitor's pauses, not on a timer", () => {
  const dips = (visitorSpeaking: (frame: number) => boolean | undefined) => {
    const motion = new HeadMotion(FACE_HEIGHT, seededRandom(5));
    const still = new HeadMotion(FACE_HEIGHT, seededRandom(5));
    // Against the same head with a visitor who never pauses: what is left is the nods.
    return Array.from({ length: 400 }, (_, frame) => {
      const heard = visitorSpeaking(frame);
      return (
        motion.next(frame * 40, { speaking: false, loudness: 0, visitorSpeaking: heard }).dy -
        still.next(frame * 40, {
          speaking: false,
          loudness: 0,
          visitorSpeaking: heard === undefined ? undefined : true,
        }).dy
      );
    });
  };
  const starts = (nods: number[]) =>
    nods.flatMap((dy, frame) => (dy > 0.5 && (nods[frame - 1] ?? 0) <= 0.5 ? [frame] : []));
  // The visitor speaks 0–3 s, pauses, speaks 5–9 s, pauses at 9 s and at 9.6 s (too soon for a second nod).
  const heard = (frame: number) => !!(frame < 75 || (frame >= 125 && frame < 225) || (frame >= 235 && frame < 240));
  const nods = dips(heard);
  expect(starts(nods).map((frame) => Math.round(frame / 25))).toEqual([3, 9]);
  expect(Math.max(...nods)).toBeGreaterThan(1.5);
  expect(Math.max(...nods)).toBeLessThan(0.02 * FACE_HEIGHT);
});
