// A document's text cut into passages for retrieval: about 500–800 characters each, cut at
// paragraph ends where possible, else at sentence ends, else between words; each passage after
// the first of a run repeats the previous one's last sentence (when short), so that an answer
// split across a cut is still found whole in one of the two.
export const PASSAGE_TARGET_CHARS = 600;
export const PASSAGE_MAX_CHARS = 800;
/** The repeated sentence is left out when longer than this. */
const OVERLAP_MAX_CHARS = 200;

const SENTENCE_END = /(?<=[.!?。！？…])\s+(?=\S)/u;

/** Pieces no longer than `max`: the text's sentences, a sentence too long split between words. */
function sentences(paragraph: string, max: number): string[] {
  const pieces: string[] = [];
  for (const sentence of paragraph.split(SENTENCE_END)) {
    if (sentence.length <= max) {
      pieces.push(sentence);
      continue;
    }
    let rest = sentence;
    while (rest.length > max) {
      const space = rest.lastIndexOf(' ', max);
      const cut = space > max / 2 ? space : max; // a word longer than half a passage is cut inside
      pieces.push(rest.slice(0, cut).trim());
      rest = rest.slice(cut).trim();
    }
    if (rest) pieces.push(rest);
  }
  return pieces;
}

/** The passages of `text`, in order. */
export function chunkText(text: string): string[] {
  const paragraphs = text
    .split(/\n\s*\n/)
    .map((p) => p.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
  const passages: string[] = [];
  let current: string[] = [];
  let length = 0;
  const flush = (overlap: boolean) => {
    if (current.length === 0) return;
    passages.push(current.join(' '));
    const last = current.at(-1)!;
    current = overlap && last.length <= OVERLAP_MAX_CHARS && current.length > 1 ? [last] : [];
    length = current.reduce((sum, s) => sum + s.length + 1, 0);
  };
  for (const paragraph of paragraphs) {
    // A whole paragraph that fits goes in as one; a passage ends at a paragraph's end once long enough.
    const pieces =
      length + paragraph.length + 1 <= PASSAGE_MAX_CHARS
        ? [paragraph]
        : sentences(paragraph, PASSAGE_MAX_CHARS - OVERLAP_MAX_CHARS);
    for (const piece of pieces) {
      if (length > 0 && length + piece.length + 1 > PASSAGE_MAX_CHARS) flush(true);
      current.push(piece);
      length += piece.length + 1;
    }
    if (length >= PASSAGE_TARGET_CHARS) flush(false);
  }
  flush(false);
  return passages;
}
