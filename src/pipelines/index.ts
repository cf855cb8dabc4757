// GET /v1/pipelines (docs/api.md#pipelines): the pipelines an identity's `pipeline_id` may name,
// which one is the default, and what each renders in a session.
import { t } from 'elysia';
import { type Audience, authenticatedRoutes } from '../auth/index.ts';
import type { Database } from '../db/index.ts';
import { oneOf } from '../http/enum-schema.ts';
import { errorResponses } from '../http/errors.ts';
import type { PipelineRegistry } from './registry.ts';
import { type Pipeline, renderingOf } from './types.ts';

export { type PipelineRegistry, releaseTraining } from './registry.ts';
export { type Pipeline, providerAvatarOf, type TrainingResult, trainedVersionOf } from './types.ts';

const frameSize = (description: string) => t.Object({ width: t.Integer(), height: t.Integer() }, { description });

export const PipelineItem = t.Object({
  pipeline_id: t.String({
    description: 'Send as `pipeline_id` when creating an identity; it cannot be changed afterwards.',
  }),
  description: t.String(),
  default: t.Boolean({ description: 'Used when an identity is created without `pipeline_id`.' }),
  renders: t.Object({
    kind: oneOf(
      ['frames', 'avatar_service'],
      '`frames`: the agent draws and publishes the avatar video; `avatar_service`: a separate avatar participant joins the room and publishes audio and video on the agent’s behalf.',
    ),
    fps: t.Nullable(t.Integer({ description: 'Frames per second (`frames` only).' })),
    portrait: t.Nullable(frameSize('Video size for `form_factor` `phone` and when none is sent (`frames` only).')),
    landscape: t.Nullable(
      frameSize(
        'Video size for `form_factor` `desktop`; null where landscape video is disabled (desktops then get portrait).',
      ),
    ),
    provider: t.Nullable(t.String({ description: 'The avatar service (`avatar_service` only).' })),
  }),
});

export interface PipelineRouteDeps {
  db: Database;
  pipelines: PipelineRegistry;
  /** AVATAR_LANDSCAPE: whether desktops get landscape video. */
  landscapeVideo: boolean;
}

function pipelineItem(pipeline: Pipeline, deps: PipelineRouteDeps) {
  const rendering = renderingOf(pipeline);
  return {
    pipeline_id: pipeline.id,
    description: pipeline.description,
    default: pipeline.id === deps.pipelines.defaultId,
    renders:
      rendering.kind === 'frames'
        ? {
            kind: rendering.kind,
            fps: rendering.fps,
            portrait: { ...rendering.sizes.portrait },
            landscape: deps.landscapeVideo ? { ...rendering.sizes.landscape } : null,
            provider: null,
          }
        : { kind: rendering.kind, fps: null, portrait: null, landscape: null, provider: rendering.provider },
  };
}

export function pipelineRoutes<const Prefix extends string>(deps: PipelineRouteDeps, audience: Audience<Prefix>) {
  return authenticatedRoutes(deps.db, audience, '/pipelines', 'Pipelines').get(
    '',
    () => deps.pipelines.list().map((pipeline) => pipelineItem(pipeline, deps)),
    {
      response: { 200: t.Array(PipelineItem), ...errorResponses(401) },
      detail: {
        operationId: 'listPipelines',
        summary: 'List the pipelines',
        description:
          'A pipeline decides how an identity is trained and which renderer serves it, for the identity’s whole life.',
      },
    },
  );
}
