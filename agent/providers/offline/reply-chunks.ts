// How a reply is cut for the offline voices. Piper and espeak-ng voice a piece of text only
// once it is whole, so the first piece decides when the visitor hears anything: it is the
// first clause alone (up to a comma or a sentence's end), spoken while the language model
// still writes the rest. Later pieces gather clauses to a sentence or so, for a natural flow.
import { tokenize } from '@livekit/agents';

/** Later pieces are at least this long (characters), unless the reply ends first. */
const LATER_PIECE_CHARS = 40;
/** Text buffered before cutting is attempted: enough to see the space after a comma. */
const CONTEXT_CHARS = 2;

/**
 * Clauses: cut after , ; : . ! ? (closing quotes or brackets kept) followed by whitespace. A
 * piece keeps one trailing space: the transcript is the pieces joined as they are spoken, and
 * without it "Paris. It" would read "Paris.It".
 */
export function splitClauses(text: string): string[] {
  const pieces: string[] = [];
  const clauseEnd = /[,;:.!?]+["')\]]*\s+/g;
  let start = 0;
  for (let match = clauseEnd.exec(text); match; match = clauseEnd.exec(text)) {
    const piece = text.slice(start, match.index + match[0].length).trim();
    if (piece) pieces.push(`${piece} `);
    start = match.index + match[0].length;
  }
  const rest = text.slice(start).trim();
  if (rest) pieces.push(rest);
  return pieces;
}

export class ReplyChunker extends tokenize.SentenceTokenizer {
  tokenize(text: string): string[] {
    return splitClauses(text);
  }

  stream(): tokenize.SentenceStream {
    // The first piece is emitted as soon as the next clause begins; later ones wait for length.
    return new tokenize.BufferedSentenceStream(splitClauses, LATER_PIECE_CHARS, CONTEXT_CHARS, { firstTokenLength: 1 });
  }
}
