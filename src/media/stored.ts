// Uploaded media as stored on an identity: the asset-store key and what decoding learnt.

/** A stored image and the renditions its renderer needs. */
export interface StoredImage {
  key: string;
  contentType: string;
  width: number;
  height: number;
  /** Renditions a renderer needs, keyed by name (e.g. `render` = long side 1024 PNG). */
  variants: Record<string, { key: string; width: number; height: number }>;
}

export interface StoredAudio {
  key: string;
  contentType: string;
  durationSeconds: number;
}
