// The text of an offline reply that may call tools (llm.ts runWithTools): spoken as it comes and
// cut after the allowed sentences, except text that may be a call written as JSON, held back
// until the reply is over; then the reply's calls, from node-llama-cpp's function calling or
// read from that text (tool-calls.ts).
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

  /**
   * `readCalls`: the reply may be a call (false after a call's result: words only);
   * `onCallBegun`: told once, as soon as the text is surely a call being written.
   */
  constructor(
    private readonly say: (piece: string) => void,
    private readonly maxSentences: number,
    private readonly readCalls: boolean,
    private readonly onCallBegun: () => void = () => {},
  ) {}

  /** Whether any words were said. */
  get spokeWords(): boolean {
    return /\S/.test(this.#text.slice(0, this.#spoken));
  }

  /** One chunk of generated text; false once the reply has its sentences (stop generating). */
  add(chunk: string): boolean {
    this.#text += chunk;
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
    return true;
  }

  /** The reply's calls once it is over; without any, text held back as a possible call is said now. */
  finish(response: LlamaChatResponse | null, names: readonly string[]): ReplyCall[] {
    const calls = (response?.functionCalls ?? []).map((call) => ({ name: call.functionName, params: call.params }));
    const written = this.readCalls && calls.length === 0 ? parseTextCall(this.#text, names) : null;
    if (written) calls.push(written);
    // A call written out that does not read as one (cut at the token limit: "order_id": "4444…)
    // is never spoken: no words, so the reply is tried again, then the visitor asked to repeat.
    const brokenCall = this.readCalls && calls.length === 0 && textCallBegun(this.#text);
    if (calls.length === 0 && !brokenCall && this.#sentences < this.maxSentences) this.#speak(this.#text.length);
    return calls;
  }

  #speak(upTo: number): void {
    const piece = this.#text.slice(this.#spoken, upTo);
    this.#spoken = Math.max(this.#spoken, upTo);
    if (piece) this.say(piece);
  }
}
