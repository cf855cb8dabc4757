// Idle life (agent/pipelines/builtin/motion.ts): small, and different when listening.
import { expect, test } from 'bun:test';
import { HeadMotion } from '../../../agent/pipelines/builtin/motion.ts';
import { seededRandom } from './served-face.ts';

const FACE_HEIGHT = 300;

function tenSeconds(speaking: boolean): Array<{ dx: number; dy: number; roll: number }> {
  const motion = new HeadMotion(FACE_HEIGHT, seededRandom(3));
  // The mood settles over the first seconds; then ten seconds are measured.
  const poses = [];
  for (let frame = 0; frame < 15 * 25; frame++) {
    const pose = motion.next(frame * 40, speaking, speaking ? 0.5 + 0.5 * Math.sin(frame) : 0);
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
