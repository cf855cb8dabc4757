// The control plane's half of the avatar pipelines: a pipeline decides how an identity is
// trained and which renderer serves it, for the identity's whole life
// (docs/api.md#pipelines). New ones slot in here under a new id, and in the agent's half
// (agent/pipelines/index.ts, the rendering) under the same id; an operator's own come from
// PIPELINE_MODULES and AGENT_PIPELINE_MODULES (loadPipelines, below).
import { resolve } from 'node:path';
import type { PipelineSettings } from '../config.ts';
import { log } from '../logging/index.ts';
import { builtinTraining } from './builtin/index.ts';
import { hostedPipelines } from './hosted/index.ts';
import type { Pipeline } from './types.ts';

export class PipelineRegistry {
  private readonly byId = new Map<string, Pipeline>();
  constructor(
    pipelines: Pipeline[],
    readonly defaultId: string,
  ) {
    for (const p of pipelines) this.byId.set(p.id, p);
    if (!this.byId.has(defaultId)) throw new Error(`Default pipeline ${defaultId} is not registered`);
  }
  get(id: string): Pipeline | undefined {
    return this.byId.get(id);
  }
  ids(): string[] {
    return [...this.byId.keys()];
  }
  list(): Pipeline[] {
    return [...this.byId.values()];
  }
}

/**
 * Frees what a training made at a provider (pipeline.release). Logged, not raised: the identity
 * or its old training goes regardless, and the provider's copy is the operator's to clean up then.
 */
export async function releaseTraining(
  pipeline: Pipeline | undefined,
  training: Record<string, unknown> | null | undefined,
): Promise<void> {
  if (!pipeline?.release || !training) return;
  await pipeline
    .release(training)
    .catch((error: unknown) => log.warn({ err: error, pipeline: pipeline.id }, 'releasing a training failed'));
}

/** Pipeline ids are stored on identities and named in URLs' JSON: short, plain. */
const PIPELINE_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The built-in pipeline, the hosted avatars whose key is set, and those of PIPELINE_MODULES,
 * with PIPELINE_DEFAULT as the default.
 * Unlike the agent's modules (a failure there costs one pipeline's sessions their avatar), a
 * module that does not load here stops the start: identities could be neither created nor
 * retrained on its pipeline, and the operator should hear of it at once.
 */
export async function loadPipelines(settings: PipelineSettings): Promise<PipelineRegistry> {
  const pipelines: Pipeline[] = [builtinTraining, ...hostedPipelines(settings.hosted)];
  for (const path of settings.modules) {
    let loaded: unknown;
    try {
      // Relative paths are the operator's, from the working directory; others are files or packages.
      loaded = ((await import(path.startsWith('.') ? resolve(path) : path)) as { default?: unknown }).default;
    } catch (error) {
      throw new Error(`PIPELINE_MODULES: ${path} could not be loaded: ${String(error)}`);
    }
    const exported = Array.isArray(loaded) ? loaded : loaded === undefined ? [] : [loaded];
    if (exported.length === 0) throw new Error(`PIPELINE_MODULES: ${path} has no default export of pipelines`);
    for (const candidate of exported) {
      const pipeline = candidate as Partial<Pipeline> | null;
      if (
        !pipeline ||
        typeof pipeline.id !== 'string' ||
        !PIPELINE_ID.test(pipeline.id) ||
        typeof pipeline.description !== 'string' ||
        typeof pipeline.train !== 'function'
      ) {
        throw new Error(
          `PIPELINE_MODULES: ${path} exports something that is not a pipeline (an id of a-z, 0-9, _ and -, a description and train() are needed)`,
        );
      }
      if (
        pipeline.trainingVersion !== undefined &&
        !(Number.isInteger(pipeline.trainingVersion) && pipeline.trainingVersion >= 0)
      )
        throw new Error(`PIPELINE_MODULES: ${path}: pipeline ${pipeline.id}'s trainingVersion must be a whole number`);
      // A module may replace the built-in pipeline's training under its id.
      const at = pipelines.findIndex((p) => p.id === pipeline.id);
      if (at >= 0) pipelines[at] = pipeline as Pipeline;
      else pipelines.push(pipeline as Pipeline);
    }
  }
  if (!pipelines.some((p) => p.id === settings.defaultId)) {
    throw new Error(
      `PIPELINE_DEFAULT: no pipeline "${settings.defaultId}" (there are: ${pipelines.map((p) => p.id).join(', ')})`,
    );
  }
  return new PipelineRegistry(pipelines, settings.defaultId);
}
