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

/** A sentence's end with the space after it, and nothing more yet. */
const ENDS_A_SENTENCE = /[.!?]+["')\]]*\s+$/;

/**
 * The first piece is emitted as soon as the next clause begins; later ones wait for length.
 * A first piece that ends a sentence goes at once, with nothing after it yet: the offline
 * model's filler ("Let me check. ", llm.ts) is followed by no words, only by the call it
 * writes, and it would otherwise wait for the whole call to be written.
 */
class FirstClauseStream extends tokenize.BufferedSentenceStream {
  /** What was pushed until the first piece went out; null after. */
  #beforeFirst: string | null = '';

  constructor() {
    super(splitClauses, LATER_PIECE_CHARS, CONTEXT_CHARS, { firstTokenLength: 1 });
  }

  override pushText(text: string): void {
    super.pushText(text);
    if (this.#beforeFirst === null) return;
    this.#beforeFirst += text;
    if (splitClauses(this.#beforeFirst).length > 1)
      this.#beforeFirst = null; // emitted by the stream itself
    else if (ENDS_A_SENTENCE.test(this.#beforeFirst)) {
      this.#beforeFirst = null;
      this.flush();
    }
  }
}

export class ReplyChunker extends tokenize.SentenceTokenizer {
  tokenize(text: string): string[] {
    return splitClauses(text);
  }

  stream(): tokenize.SentenceStream {
    return new FirstClauseStream();
  }
}
