// How a reply is cut for the offline voices. Piper and espeak-ng voice a piece of text only
// once it is whole, so the first piece decides when the visitor hears anything: it is the
// first clause alone (up to a comma or a sentence's end), or its first FIRST_PIECE_WORDS words
// when it is longer, spoken while the language model still writes the rest. Later pieces
// gather clauses to a sentence or so, for a natural flow.
import { tokenize } from '@livekit/agents';

/** Later pieces are at least this long (characters), unless the reply ends first. */
const LATER_PIECE_CHARS = 40;
/** Text buffered before cutting is attempted: enough to see the space after a comma. */
const CONTEXT_CHARS = 2;
/**
 * A longer first clause is cut after this many words. The offline model writes ~22 words a
 * second on two cores: "The weather in Paris today is sunny with a mild breeze." waited 0.6 s
 * for its period, its first four words 0.25 s. The visitor hears Piper's ~0.1 s of trailing
 * quiet between the pieces, a phrase's pause; the next piece is voiced while the first plays.
 */
export const FIRST_PIECE_WORDS = 4;

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

/**
 * The reply's start as pieces: its first FIRST_PIECE_WORDS words when they are written (each
 * followed by a space) before its first clause ends, then clauses; otherwise clauses.
 */
export function splitFirstPiece(text: string): string[] {
  const clauses = splitClauses(text);
  const words = new RegExp(`^\\s*(?:\\S+\\s+){${FIRST_PIECE_WORDS}}`).exec(text);
  if (!words) return clauses;
  const firstWords = words[0].trim();
  // A clause ending within those words (a comma after the second, say) is the cut.
  if (clauses.length > 1 && clauses[0]!.trim().length <= firstWords.length) return clauses;
  return [`${firstWords} `, ...splitClauses(text.slice(words[0].length))];
}

/** A sentence's end with the space after it, and nothing more yet. */
const ENDS_A_SENTENCE = /[.!?]+["')\]]*\s+$/;

/**
 * The first piece is emitted as soon as the next clause or the fifth word begins; later ones
 * wait for length. A first piece that ends a sentence goes at once, with nothing after it yet:
 * the offline model's filler ("Let me check. ", llm.ts) is followed by no words, only by the
 * call it writes, and it would otherwise wait for the whole call to be written.
 */
class FirstClauseStream extends tokenize.BufferedSentenceStream {
  /** What was pushed until the first piece went out; null after. */
  #beforeFirst: string | null = '';
  readonly #cut: { first: boolean };

  constructor() {
    // The stream asks its function for pieces each time text comes: the first piece's rule
    // until it has cut one, clauses after.
    const cut = { first: false };
    const pieces = (text: string) => {
      if (cut.first) return splitClauses(text);
      const first = splitFirstPiece(text);
      cut.first = first.length > 1;
      return first;
    };
    super(pieces, LATER_PIECE_CHARS, CONTEXT_CHARS, { firstTokenLength: 1 });
    this.#cut = cut;
  }

  override pushText(text: string): void {
    super.pushText(text);
    if (this.#beforeFirst === null) return;
    this.#beforeFirst += text;
    if (this.#cut.first)
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
