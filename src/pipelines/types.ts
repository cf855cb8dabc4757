// What a pipeline is to the control plane (src/pipelines/registry.ts loads them): its id,
// description, what its sessions show, and its training. The agent's half of the same
// pipeline, the rendering, is agent/pipelines/types.ts.

import type { AssetStore } from '../assets/index.ts';
import { AVATAR_FPS, AVATAR_FRAME_SIZES, type AvatarShape, type FrameSize } from '../contract/index.ts';
import type { InspectedAudio, InspectedImage, StoredImage } from '../media/index.ts';

export interface TrainingInput {
  identityId: string;
  image: InspectedImage;
  audio?: InspectedAudio;
  store: AssetStore;
  /** Folder for this training's files, e.g. `identities/idn_…/<token>/`. */
  prefix: string;
  /** The provider's avatar the identity names (`provider_avatar_id`), for pipelines that take one. */
  providerAvatarId?: string;
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
  | { kind: 'frames'; fps: number; sizes: Readonly<Record<AvatarShape, FrameSize>> }
  /** A separate avatar service joins the room and publishes audio and video on the agent's behalf. */
  | { kind: 'avatar_service'; provider: string };

/** The built-in CPU talking head's output (agent/pipelines/builtin). */
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
  /**
   * The version of the training train() makes now, which it records as `training.version`.
   * Identities whose recorded version is older (or missing) are trained again in the background
   * from their stored photo (src/identities/training-upgrades.ts): bump it when a change to the
   * training should reach identities trained before. Unset: never upgraded.
   */
  trainingVersion?: number;
  /** Set when identities of this pipeline name an avatar at its provider (`provider_avatar_id`). */
  providerAvatars?: ProviderAvatars;
  /**
   * Frees what a training made outside our store (a provider's avatar made from the photo),
   * once the identity is deleted or a retrain replaced that training. Best effort.
   */
  release?(training: Record<string, unknown>): Promise<void>;
  /** Loads what training needs and runs it once, storing nothing: at start, before the service says ready. */
  warm?(): Promise<void>;
}

/** Avatars kept at a hosted provider, which identities name by the provider's id. */
export interface ProviderAvatars {
  /** Whether an identity must name one (the provider makes none from a photo). */
  required: boolean;
  /** Refuses an id the provider does not know or cannot use (ApiError 422); 502 when the provider does not answer. */
  check(id: string): Promise<void>;
}

/** The provider avatar a training records (`training.provider_avatar_id`), if any. */
export function providerAvatarOf(training: Record<string, unknown> | null | undefined): string | undefined {
  const id = training?.provider_avatar_id;
  return typeof id === 'string' && id ? id : undefined;
}

/** The training version an identity's training recorded (`training.version`); 0 when it recorded none. */
export function trainedVersionOf(training: Record<string, unknown> | null | undefined): number {
  const version = training?.version;
  return typeof version === 'number' && Number.isFinite(version) ? version : 0;
}

export function renderingOf(pipeline: Pipeline): PipelineRendering {
  return pipeline.renders ?? BUILTIN_RENDERING;
}
