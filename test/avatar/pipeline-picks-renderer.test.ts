// Which avatar serves a session (agent/pipelines): the identity's pipeline decides; the
// stand-in covers sessions without an identity, identities trained before the talking head
// (no rig among their assets) and pipeline ids this worker does not know.
import { describe, expect, test } from 'bun:test';
import { TalkingHeadRenderer } from '../../agent/pipelines/builtin/index.ts';
import {
  type AvatarRenderer,
  type AvatarServicePipeline,
  chooseAvatar,
  fallbackRenderer,
  type RendererPipeline,
  registerAvatarPipeline,
} from '../../agent/pipelines/index.ts';
import { StandinRenderer } from '../../agent/pipelines/standin/index.ts';
import { avatarFrameSize, type DispatchIdentity } from '../../src/contract/index.ts';
import { type RecordingLogger, recordingLogger } from '../support/agent-log.ts';

const identity = (fields: Partial<DispatchIdentity> = {}): DispatchIdentity => ({
  identity_id: 'idn_choice',
  name: 'Ada',
  prompt: 'You are Ada.',
  language: 'en',
  image_url: 'http://127.0.0.1:9/render.png',
  audio_url: null,
  ...fields,
});

const trainedAssets = (shape: 'portrait' | 'landscape') => ({
  [`${shape}.image`]: `http://127.0.0.1:9/${shape}.png`,
  [`${shape}.rig`]: `http://127.0.0.1:9/${shape}.rig.json`,
  [`${shape}.texture.mouth`]: `http://127.0.0.1:9/${shape}.mouth.png`,
});

const portrait = avatarFrameSize('portrait');
const landscape = avatarFrameSize('landscape');

const quiet = recordingLogger();

async function rendererFor(
  options: Omit<Parameters<typeof chooseAvatar>[0], 'logger'> & { logger?: RecordingLogger },
): Promise<AvatarRenderer> {
  const choice = await chooseAvatar({ logger: quiet, ...options });
  if (choice.kind !== 'renderer') throw new Error(`expected a renderer, got ${choice.kind}`);
  return choice.renderer;
}

describe('choosing the avatar', () => {
  test('the built-in pipeline draws the talking head from its trained assets, at the shape asked', async () => {
    const renderer = await rendererFor({
      identity: identity({ pipeline_id: 'builtin', assets: trainedAssets('portrait') }),
      size: portrait,
    });
    expect(renderer).toBeInstanceOf(TalkingHeadRenderer);
    expect(renderer.size).toEqual({ width: 540, height: 960 });
    const wide = await rendererFor({
      identity: identity({ assets: { ...trainedAssets('portrait'), ...trainedAssets('landscape') } }),
      size: landscape,
    });
    expect(wide).toBeInstanceOf(TalkingHeadRenderer);
    expect(wide.size).toEqual({ width: 960, height: 540 });
  });

  test('the stand-in: no identity, an identity trained before the talking head, or without this shape’s assets', async () => {
    expect(await rendererFor({ identity: null, size: portrait })).toBeInstanceOf(StandinRenderer);
    expect(await rendererFor({ identity: identity(), size: portrait })).toBeInstanceOf(StandinRenderer);
    expect(
      await rendererFor({ identity: identity({ pipeline_id: 'builtin', assets: {} }), size: portrait }),
    ).toBeInstanceOf(StandinRenderer);
    expect(
      await rendererFor({ identity: identity({ assets: trainedAssets('portrait') }), size: landscape }),
    ).toBeInstanceOf(StandinRenderer);
  });

  test('an unknown pipeline id gets the stand-in, and says so', async () => {
    const logger = recordingLogger();
    const renderer = await rendererFor({
      identity: identity({ pipeline_id: 'nowhere', assets: trainedAssets('portrait') }),
      size: portrait,
      logger,
    });
    expect(renderer).toBeInstanceOf(StandinRenderer);
    expect(logger.lines).toEqual(expect.arrayContaining([expect.objectContaining({ pipeline_id: 'nowhere' })]));
  });

  test('a registered pipeline serves its identities: an in-process renderer, or an avatar service', async () => {
    const drawn: AvatarRenderer[] = [];
    const gpu: RendererPipeline = {
      kind: 'renderer',
      id: 'test-gpu',
      createRenderer(options) {
        const renderer = new StandinRenderer(options);
        drawn.push(renderer);
        return renderer;
      },
    };
    const hosted: AvatarServicePipeline = {
      kind: 'service',
      id: 'test-hosted',
      start: async () => ({ close: async () => {} }),
    };
    registerAvatarPipeline(gpu);
    registerAvatarPipeline(hosted);
    const renderer = await rendererFor({ identity: identity({ pipeline_id: 'test-gpu' }), size: portrait });
    expect(drawn).toEqual([renderer]);
    expect(
      await chooseAvatar({ identity: identity({ pipeline_id: 'test-hosted' }), size: portrait, logger: quiet }),
    ).toEqual({
      kind: 'service',
      pipeline: hosted,
    });
  });

  test('when an avatar service fails, the built-in face stands in if the identity was trained for it, else the stand-in', () => {
    // Hosted pipelines (lemonslice) train the built-in face too: their identities carry its assets.
    expect(
      fallbackRenderer({
        identity: identity({ pipeline_id: 'lemonslice', assets: trainedAssets('portrait') }),
        size: portrait,
        logger: quiet,
      }),
    ).toBeInstanceOf(TalkingHeadRenderer);
    expect(
      fallbackRenderer({
        identity: identity({ pipeline_id: 'example-avatar-service' }),
        size: portrait,
        logger: quiet,
      }),
    ).toBeInstanceOf(StandinRenderer);
    expect(fallbackRenderer({ identity: null, size: portrait, logger: quiet })).toBeInstanceOf(StandinRenderer);
  });
});
