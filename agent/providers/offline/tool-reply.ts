// The text of an offline reply that may call tools (llm.ts runWithTools): spoken as it comes and
// cut after the allowed sentences, except text that may be a call written as JSON, held back
// until the reply is over; then the reply's calls, from node-llama-cpp's function calling or
// read from that text (tool-calls.ts).
import { echoedAttribution, lineBeingRead, sourceLeadIn } from '../../conversation/quoted-data.ts';
import type { LlamaChatResponse } from './llama.ts';
import { mayBeTextCall, parseTextCall, textCallBegun } from './tool-calls.ts';

/** A sentence ends at . ! or ? (closing quotes allowed) followed by whitespace. */
const SENTENCE_END = /[.!?]+["')\]]*\s/g;

export interface ReplyCall {
  name: string;
  params: unknown;
}

export class ToolReplyText {
  #text = '';
  #spoken = 0;
  #sentences = 0;

  #callBegun = false;
  /** The reply's start, held while it may be a quoted-data attribution read out or name its source; null once decided. */
  #start: string | null = '';
  /** The reply reads quoted data out: its attribution was dropped, and the quote marks go too. */
  #readsQuote = false;
  /** The line it was reading is said whole instead: the model writes no more. */
  #readOut = false;

  /**
   * `readCalls`: the reply may be a call (false after a call's result: words only);
   * `onCallBegun`: told once, as soon as the text is surely a call being written;
   * `quotedLines`: the turn's quoted data, one line each (quoted-data.ts).
   */
  constructor(
    private readonly say: (piece: string) => void,
    private readonly maxSentences: number,
    private readonly readCalls: boolean,
    private readonly onCallBegun: () => void = () => {},
    private readonly quotedLines: readonly string[] = [],
  ) {}

  /** Whether any words were said. */
  get spokeWords(): boolean {
    return /\S/.test(this.#text.slice(0, this.#spoken));
  }

  /** One chunk of generated text; false once the reply has its sentences (stop generating). */
  add(chunk: string): boolean {
    if (this.#readOut) return false;
    const text = this.#unattributed(chunk);
    if (text === null) return true;
    this.#text += text;
    if (this.readCalls && mayBeTextCall(this.#text)) {
      if (!this.#callBegun && textCallBegun(this.#text)) {
        this.#callBegun = true;
        this.onCallBegun();
      }
      return true;
    }
    SENTENCE_END.lastIndex = 0;
    this.#sentences = 0;
    for (let match = SENTENCE_END.exec(this.#text); match; match = SENTENCE_END.exec(this.#text)) {
      if (++this.#sentences >= this.maxSentences) {
        this.#speak(match.index + match[0].length - 1);
        return false;
      }
    }
    this.#speak(this.#text.length);
    return !this.#readOut;
  }

  /** The reply's calls once it is over; without any, text held back as a possible call is said now. */
  finish(response: LlamaChatResponse | null, names: readonly string[]): ReplyCall[] {
    // Over while it still looked like an attribution: what it was is said as it is.
    if (this.#start) this.#text += this.#start;
    this.#start = null;
    const calls = (response?.functionCalls ?? []).map((call) => ({ name: call.functionName, params: call.params }));
    const written = this.readCalls && calls.length === 0 ? parseTextCall(this.#text, names) : null;
    if (written) calls.push(written);
    // A call written out that does not read as one (cut at the token limit: "order_id": "4444…)
    // is never spoken: no words, so the reply is tried again, then the visitor asked to repeat.
    const brokenCall = this.readCalls && calls.length === 0 && textCallBegun(this.#text);
    if (calls.length === 0 && !brokenCall && this.#sentences < this.maxSentences) this.#speak(this.#text.length);
    return calls;
  }

  /**
   * The chunk as it is spoken, null while held: a reply that starts by reading a quoted-data
   * attribution out (quoted-data.ts) says the passage without it, and without the « » around it.
   */
  #unattributed(chunk: string): string | null {
    if (this.#start === null) return this.#readsQuote ? this.#unquoted(chunk) : chunk;
    this.#start += chunk;
    const echoed = echoedAttribution(this.#start);
    if (echoed === 'undecided') {
      // Surely reading a line out (its attribution's start is written): the line is said now,
      // not after the model has copied it token by token.
      const line = lineBeingRead(this.#start, this.quotedLines);
      if (line === null) return null;
      this.#start = null;
      this.#readsQuote = true;
      this.#readOut = true;
      return line;
    }
    const start = this.#start;
    if (echoed === null) {
      // Not read out, but perhaps begun by naming its source: that goes, the answer is said.
      const named = sourceLeadIn(start);
      if (named === 'undecided') return null;
      this.#start = null;
      return named === null ? start : start.slice(named).replace(/^\p{Ll}/u, (letter) => letter.toUpperCase());
    }
    this.#start = null;
    this.#readsQuote = true;
    return this.#unquoted(start.slice(echoed));
  }

  /** Quoted text as it is said: without « », and without the opening mark and space before its first word. */
  #unquoted(text: string): string {
    const unquoted = text.replace(/[«»]/g, '');
    return this.#text ? unquoted : unquoted.replace(/^[\s"]+/, '');
  }

  #speak(upTo: number): void {
    const piece = this.#text.slice(this.#spoken, upTo);
    this.#spoken = Math.max(this.#spoken, upTo);
    if (piece) this.say(piece);
  }
}
