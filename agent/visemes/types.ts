// The visemes' vocabulary, shared by the phoneme (index.ts) and spelling (letters.ts) paths.

/**
 * The mouth shapes told apart. `closed`: lips pressed (m, b, p); `lip-teeth`: lower lip to
 * the upper teeth (f, v); `teeth`: nearly closed, teeth showing (s, t, d, n…); `hush`: the
 * same, pushed forward (sh, ch, j); `spread`: i, e; `mid`: schwa and most consonants;
 * `open`: a; `round`: o, u, w.
 */
export type Viseme = 'rest' | 'closed' | 'lip-teeth' | 'teeth' | 'hush' | 'spread' | 'mid' | 'open' | 'round';

/** One sound: its shape, from `start` for `duration` seconds (relative to the frame that carries it). */
export interface VisemeCue {
  viseme: Viseme;
  start: number;
  duration: number;
  /** The vowel of a stressed syllable (Piper marks them): the head and brows accent it. */
  stress?: boolean;
}
