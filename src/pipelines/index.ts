// A pipeline decides how an identity is trained and which renderer serves it, for the
// identity's whole life (spec §2.1). New renderers slot in here under a new id.
import type { AssetStore } from '../assets/index.ts';
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

export interface Pipeline {
  id: string;
  description: string;
  train(input: TrainingInput): Promise<TrainingResult>;
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

export function defaultPipelines(): PipelineRegistry {
  return new PipelineRegistry([builtinPipeline], builtinPipeline.id);
}
