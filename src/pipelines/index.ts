// A pipeline decides how an identity is trained and which renderer serves it, for the
// identity's whole life (spec §2.1). New renderers slot in here under a new id, and in the
// agent's registry (agent/renderers/index.ts) under the same id; an operator's own come
// from PIPELINE_MODULES and AGENT_PIPELINE_MODULES (loadPipelines, below).
import { resolve } from 'node:path';
import { AVATAR_FPS, AVATAR_FRAME_SIZES, type FrameSize } from '../../agent/renderers/renderer.ts';
import type { AssetStore } from '../assets/index.ts';
import type { PipelineSettings } from '../config.ts';
import type { StoredImage } from '../identities/schema.ts';
import type { InspectedAudio, InspectedImage } from '../identities/media/index.ts';
import { builtinPipeline } from './builtin/index.ts';

export interface TrainingInput {
  identityId: string;
  image: InspectedImage;
  audio?: InspectedAudio;
  store: AssetStore;
  /** Folder for this training's files, e.g. `identities/idn_…/<token>/`. */
  prefix: string;
}

export interface TrainingResult {
  /** The identity's image as stored, with the renditions its renderer needs. */
  image: StoredImage;
  /** Whatever else the renderer needs at session start, precomputed. */
  training: Record<string, unknown>;
}

/** What a pipeline's sessions show, as GET /v1/pipelines tells clients. */
export type PipelineRendering =
  /** Frames drawn in the agent job, at these sizes per shape, published by the agent. */
  | { kind: 'frames'; fps: number; sizes: Readonly<Record<'portrait' | 'landscape', FrameSize>> }
  /** A separate avatar service joins the room and publishes audio and video on the agent's behalf. */
  | { kind: 'avatar_service'; provider: string };

/** The built-in CPU talking head's output (agent/renderers/builtin). */
export const BUILTIN_RENDERING: PipelineRendering = { kind: 'frames', fps: AVATAR_FPS, sizes: AVATAR_FRAME_SIZES };

export interface Pipeline {
  id: string;
  description: string;
  /** What its sessions show; unset: frames drawn in the agent job at the built-in sizes (BUILTIN_RENDERING). */
  renders?: PipelineRendering;
  /**
   * Rejects (MediaError, 422) a photo this pipeline cannot train from, before anything is
   * stored. Used by a retrain, whose training runs after its 202; at create, `train` itself
   * refuses such a photo within the call.
   */
  checkImage?(image: InspectedImage): Promise<void>;
  train(input: TrainingInput): Promise<TrainingResult>;
}

export function renderingOf(pipeline: Pipeline): PipelineRendering {
  return pipeline.renders ?? BUILTIN_RENDERING;
}

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

/** Pipeline ids are stored on identities and named in URLs' JSON: short, plain. */
const PIPELINE_ID = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/**
 * The built-in pipeline and those of PIPELINE_MODULES, with PIPELINE_DEFAULT as the default.
 * Unlike the agent's modules (a failure there costs one pipeline's sessions their avatar), a
 * module that does not load here stops the start: identities could be neither created nor
 * retrained on its pipeline, and the operator should hear of it at once.
 */
export async function loadPipelines(settings: PipelineSettings): Promise<PipelineRegistry> {
  const pipelines: Pipeline[] = [builtinPipeline];
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
      if (!pipeline || typeof pipeline.id !== 'string' || !PIPELINE_ID.test(pipeline.id) || typeof pipeline.description !== 'string' || typeof pipeline.train !== 'function') {
        throw new Error(`PIPELINE_MODULES: ${path} exports something that is not a pipeline (an id of a-z, 0-9, _ and -, a description and train() are needed)`);
      }
      // A module may replace the built-in pipeline's training under its id.
      const at = pipelines.findIndex((p) => p.id === pipeline.id);
      if (at >= 0) pipelines[at] = pipeline as Pipeline;
      else pipelines.push(pipeline as Pipeline);
    }
  }
  if (!pipelines.some((p) => p.id === settings.defaultId)) {
    throw new Error(`PIPELINE_DEFAULT: no pipeline "${settings.defaultId}" (there are: ${pipelines.map((p) => p.id).join(', ')})`);
  }
  return new PipelineRegistry(pipelines, settings.defaultId);
}
