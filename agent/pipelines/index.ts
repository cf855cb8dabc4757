// The agent's half of the avatar pipelines: which avatar serves a session, by the identity's
// pipeline (docs/api.md#pipelines: the pipeline decides the renderer for the identity's whole
// life). Each pipeline id names either an in-process renderer or an avatar service
// (types.ts). The control plane's half, training under the same ids, is src/pipelines/. A new
// one registers here, or in a module listed in AGENT_PIPELINE_MODULES; agent/avatar, the job
// and the control plane's session code stay as they are.
import { resolve } from 'node:path';
import { loadAgentSettings, loadHostedAvatars } from '../../src/config.ts';
import { BUILTIN_PIPELINE_ID, builtinAssetNames } from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';
import { anamPipeline } from './anam/index.ts';
import { beyPipeline } from './bey/index.ts';
import { TalkingHeadRenderer } from './builtin/index.ts';
import { lemonslicePipeline } from './lemonslice/index.ts';
import { StandinRenderer } from './standin/index.ts';
import type {
  AvatarPipeline,
  AvatarRenderer,
  AvatarRendererOptions,
  AvatarServicePipeline,
  RendererPipeline,
} from './types.ts';

export * from './types.ts';

/**
 * The built-in CPU talking head. Identities trained before it (no rig among their assets)
 * keep the stand-in: the photo, breathing.
 */
const builtinRendering: RendererPipeline = {
  kind: 'renderer',
  id: BUILTIN_PIPELINE_ID,
  createRenderer(options) {
    const assets = options.identity?.assets ?? {};
    const shape = options.size.width > options.size.height ? 'landscape' : 'portrait';
    if (!Object.values(builtinAssetNames(shape)).every((name) => assets[name])) return null;
    return new TalkingHeadRenderer(options);
  },
};

const registry = new Map<string, AvatarPipeline>([[builtinRendering.id, builtinRendering]]);

/** Adds (or replaces) the pipeline under its id, in this process. */
export function registerAvatarPipeline(pipeline: AvatarPipeline): void {
  registry.set(pipeline.id, pipeline);
}

let configuredModules: Promise<void> | undefined;

/**
 * Registers the hosted avatars whose key is set and the pipelines of AGENT_PIPELINE_MODULES
 * (once per process). A module that fails
 * to load is reported and skipped: its identities get the stand-in, the others their avatar.
 */
export function loadConfiguredAvatarPipelines(
  logger: Pick<AgentLogger, 'warn'>,
  env: Record<string, string | undefined> = process.env,
): Promise<void> {
  configuredModules ??= (async () => {
    // Hosted avatars whose key is set (the control plane offers the same ones).
    const hosted = loadHostedAvatars(env);
    if (hosted.lemonslice) registerAvatarPipeline(lemonslicePipeline(hosted.lemonslice));
    if (hosted.anam) registerAvatarPipeline(anamPipeline(hosted.anam));
    if (hosted.bey) registerAvatarPipeline(beyPipeline(hosted.bey));
    for (const path of loadAgentSettings(env).pipelineModules) {
      try {
        // Relative paths are the operator's, from the working directory; others are files or packages.
        const loaded = (
          (await import(path.startsWith('.') ? resolve(path) : path)) as { default?: AvatarPipeline | AvatarPipeline[] }
        ).default;
        const pipelines = Array.isArray(loaded) ? loaded : loaded ? [loaded] : [];
        if (pipelines.length === 0) throw new Error('it has no default export of avatar pipelines');
        for (const pipeline of pipelines) registerAvatarPipeline(pipeline);
      } catch (error) {
        logger.warn({ module: path, err: error }, 'AGENT_PIPELINE_MODULES: a module could not be loaded');
      }
    }
  })();
  return configuredModules;
}

/**
 * What draws the face when an avatar service fails: the built-in talking head when the
 * identity's training included its rig (hosted pipelines train it too), else the stand-in.
 */
export function fallbackRenderer(options: AvatarRendererOptions): AvatarRenderer {
  return builtinRendering.createRenderer(options) ?? new StandinRenderer(options);
}

export type AvatarChoice =
  | { kind: 'renderer'; renderer: AvatarRenderer }
  | { kind: 'service'; pipeline: AvatarServicePipeline };

/**
 * What serves this session's avatar: its identity's pipeline, or the stand-in for a session
 * without an identity, an identity the pipeline cannot serve, or an unknown pipeline id.
 */
export async function chooseAvatar(options: AvatarRendererOptions): Promise<AvatarChoice> {
  await loadConfiguredAvatarPipelines(options.logger);
  const identity = options.identity;
  if (!identity) return { kind: 'renderer', renderer: new StandinRenderer(options) };
  const pipelineId = identity.pipeline_id ?? BUILTIN_PIPELINE_ID;
  const pipeline = registry.get(pipelineId);
  if (pipeline?.kind === 'service') return { kind: 'service', pipeline };
  if (!pipeline)
    options.logger.warn(
      { pipeline_id: pipelineId },
      'no avatar pipeline of that id in this worker; streaming the stand-in',
    );
  return { kind: 'renderer', renderer: pipeline?.createRenderer(options) ?? new StandinRenderer(options) };
}
