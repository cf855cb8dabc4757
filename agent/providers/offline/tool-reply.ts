// The text of an offline reply that may call tools (llm.ts runWithTools): spoken as it comes and
// cut after the allowed sentences, except text that may be a call written as JSON, held back
// until the reply is over; then the reply's calls, from node-llama-cpp's function calling or
// read from that text (tool-calls.ts). A reply to results (`replaceFirst`) holds its first
// sentence until it is whole, so that a refusal of them is never spoken (fallback-replies.ts).
import type { LlamaChatResponse } from './llama.ts';
import { mayBeTextCall, parseTextCall } from './tool-calls.ts';

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
  /** Whether the first sentence was let through (or replaced); always, without `replaceFirst`. */
  #firstChecked: boolean;
  #replaced = false;

  /**
   * `readCalls`: the reply may be a call (false after a call's result: words only).
   * `replaceFirst`: what to say instead of the reply, given its first sentence ("" for none); null
   * lets it through.
   */
  constructor(
    private readonly say: (piece: string) => void,
    private readonly maxSentences: number,
    private readonly readCalls: boolean,
    private readonly replaceFirst?: (firstSentence: string) => string | null,
  ) {
    this.#firstChecked = !replaceFirst;
  }

  /** Whether any words were said (or are about to be: a replacement). */
  get spokeWords(): boolean {
    return this.#replaced || /\S/.test(this.#text.slice(0, this.#spoken));
  }

  /** One chunk of generated text; false once the reply has its sentences (stop generating). */
  add(chunk: string): boolean {
    if (this.#replaced) return false;
    this.#text += chunk;
    if (this.readCalls && mayBeTextCall(this.#text)) return true;
    if (!this.#firstChecked) {
      SENTENCE_END.lastIndex = 0;
      const end = SENTENCE_END.exec(this.#text);
      if (!end) return true;
      if (this.#checkFirst(this.#text.slice(0, end.index + end[0].length))) return false;
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
    if (this.#replaced || (!this.#firstChecked && this.#checkFirst(this.#text))) return calls;
    if (calls.length === 0 && this.#sentences < this.maxSentences) this.#speak(this.#text.length);
    return calls;
  }

  /** Lets the first sentence through, or says its replacement instead of the whole reply (true). */
  #checkFirst(sentence: string): boolean {
    this.#firstChecked = true;
    const replacement = this.replaceFirst?.(sentence.trim()) ?? null;
    if (replacement === null) return false;
    this.#replaced = true;
    this.say(replacement);
    return true;
  }

  #speak(upTo: number): void {
    const piece = this.#text.slice(this.#spoken, upTo);
    this.#spoken = Math.max(this.#spoken, upTo);
    if (piece) this.say(piece);
  }
}
