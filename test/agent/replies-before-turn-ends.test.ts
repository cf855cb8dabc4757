// When the agent may prepare a reply before the visitor's turn is confirmed over (agents'
// preemptive generation; agent/conversation/index.ts repliesBeforeTurnEnds): not when the turn
// will gain camera images a cloud model reads, nor in auto mode (the language switch comes with
// the turn's end); with the offline model, which reads no images, also with visual awareness on,
// as sessions start by default (bench/conversation --visual-awareness: Piper turns 1.21 → 0.97 s);
// the offline model is not shown the camera at all (agent/conversation/camera.ts modelSeesCamera).
import { describe, expect, test } from 'bun:test';
import { modelSeesCamera } from '../../agent/conversation/camera.ts';
import { repliesBeforeTurnEnds } from '../../agent/conversation/index.ts';

describe('a reply prepared before the turn ends', () => {
  test('with the offline model, whether or not the camera is looked at', () => {
    expect(repliesBeforeTurnEnds({ visual_awareness: true, language: 'en' }, 'offline')).toBe(true);
    expect(repliesBeforeTurnEnds({ visual_awareness: false, language: 'es' }, 'offline')).toBe(true);
  });

  test('with a cloud model, only without visual awareness', () => {
    expect(repliesBeforeTurnEnds({ visual_awareness: true, language: 'en' }, 'openai-compatible')).toBe(false);
    expect(repliesBeforeTurnEnds({ visual_awareness: false, language: 'en' }, 'openai-compatible')).toBe(true);
  });

  test('never in auto mode', () => {
    expect(repliesBeforeTurnEnds({ visual_awareness: false, language: 'auto' }, 'offline')).toBe(false);
    expect(repliesBeforeTurnEnds({ visual_awareness: false, language: 'auto' }, 'openai-compatible')).toBe(false);
  });
});

describe('the camera shown to the model', () => {
  test('a cloud model with visual awareness; never the offline model, which reads text only', () => {
    expect(modelSeesCamera(true, 'openai-compatible')).toBe(true);
    expect(modelSeesCamera(false, 'openai-compatible')).toBe(false);
    expect(modelSeesCamera(true, 'offline')).toBe(false);
  });
});
