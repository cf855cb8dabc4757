// End of turn judged from what the visitor said so far (AGENT_TURN_DETECTION=transcript).
//
// LiveKit's local end-of-turn model (`model`) listens to the voice's prosody: a synthetic or
// flat voice never sounds finished to it, so such turns wait the maximum delay (3 s), and it
// knows no Polish or Ukrainian. Plain `vad` answers any pause as the end, so a visitor who
// hesitates mid-sentence ("What is the capital of… France?") is answered half-heard. This
// detector reads the recogniser's transcript instead: a turn that ends on a word finished
// turns rarely end on (an article, a conjunction, a preposition, a filler) or trails off on a
// comma or an ellipsis is held for the maximum delay; anything else ends at the minimum, as
// `vad` would. In English a language model reads the words too (SentenceReader: SmolLM2's
// probability that the next token ends the sentence): a clear verdict from it wins over the word
// list both ways ("Which continent is Brazil in?" is finished, "Which country has" is not), an
// unclear one leaves it to the list. It plugs into agents as a text turn detector, which agents
// consults once the transcript of the turn is final, within the minimum endpointing delay.
import type { llm } from '@livekit/agents';
import type { SpokenLanguage } from '../../src/contract/index.ts';

/** What agents asks a text turn detector (its `_TurnDetector`, not exported by name). */
export interface TextTurnDetector {
  readonly model: string;
  readonly provider: string;
  unlikelyThreshold(language?: string): Promise<number | undefined>;
  supportsLanguage(language?: string): Promise<boolean>;
  predictEndOfTurn(chatCtx: llm.ChatContext): Promise<number>;
}

/**
 * Words a finished turn rarely ends on: articles, conjunctions, possessives, prepositions,
 * auxiliaries, question words, fillers. Punctuation does not save them: Whisper ends a broken-off
 * phrase with a full stop or a question mark as readily ("What is the capital of?"), so "Where
 * are you from?" is held too (up to the maximum delay, what `model` costs on every flat voice).
 */
const UNFINISHED_ENDINGS: Record<SpokenLanguage, string[]> = {
  en: [
    ...[
      'the',
      'a',
      'an',
      'and',
      'or',
      'but',
      'because',
      'if',
      'than',
      'my',
      'your',
      'our',
      'their',
      'of',
      'to',
      'in',
      'on',
      'at',
      'for',
      'with',
      'from',
      'about',
      'into',
      'by',
    ],
    ...[
      'through',
      'between',
      'across',
      'over',
      'under',
      'near',
      'around',
      'after',
      'before',
      'during',
      'without',
      'towards',
    ],
    ...[
      'is',
      'are',
      'was',
      'were',
      'what',
      'which',
      'how',
      'where',
      'when',
      'who',
      'why',
      'um',
      'uh',
      'er',
      'erm',
      'hmm',
    ],
  ],
  es: [
    ...[
      'el',
      'la',
      'los',
      'las',
      'un',
      'una',
      'unos',
      'unas',
      'y',
      'o',
      'pero',
      'porque',
      'que',
      'si',
      'de',
      'del',
      'al',
      'a',
      'mi',
      'mis',
      'tu',
      'tus',
      'su',
      'sus',
    ],
    ...[
      'en',
      'con',
      'por',
      'para',
      'sobre',
      'es',
      'son',
      'está',
      'qué',
      'cuál',
      'cómo',
      'dónde',
      'cuándo',
      'quién',
      'eh',
      'em',
      'este',
    ],
    ...['entre', 'hacia', 'desde', 'hasta', 'sin', 'bajo', 'durante'],
  ],
  pl: [
    ...[
      'i',
      'a',
      'ale',
      'lub',
      'albo',
      'oraz',
      'że',
      'bo',
      'jeśli',
      'w',
      'we',
      'z',
      'ze',
      'na',
      'do',
      'od',
      'po',
      'dla',
      'przez',
      'o',
      'mój',
      'moja',
      'moje',
      'twój',
      'twoja',
    ],
    ...['jest', 'są', 'jaki', 'jaka', 'jakie', 'jak', 'gdzie', 'kiedy', 'kto', 'dlaczego', 'eee', 'yyy', 'hmm'],
    ...['między', 'przed', 'za', 'pod', 'nad', 'bez', 'przy', 'u'],
  ],
  uk: [
    ...[
      'і',
      'й',
      'та',
      'а',
      'але',
      'або',
      'бо',
      'якщо',
      'в',
      'у',
      'з',
      'із',
      'на',
      'до',
      'від',
      'по',
      'для',
      'через',
      'про',
      'мій',
      'моя',
      'моє',
      'твій',
      'твоя',
    ],
    ...['є', 'який', 'яка', 'яке', 'як', 'де', 'коли', 'хто', 'чому', 'е', 'ее', 'еее'],
    ...['між', 'перед', 'за', 'під', 'над', 'без', 'біля', 'після'],
  ],
};

/** A trailing comma, colon, dash or ellipsis: the recogniser heard the voice trail off. */
const TRAILING_OFF = /(\.\.\.|…|[,;:\-–—])\s*$/u;

/** Reads how likely `text` is a whole sentence (the offline models' SentenceEnd). */
export interface SentenceReader {
  probability(text: string): Promise<number>;
}

/** `reader`, its readings refused once they take longer than `ms` (turnIsOver then goes by the word list). */
export function readingWithin(reader: SentenceReader, ms: number): SentenceReader {
  return {
    probability(text) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const late = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`no sentence reading within ${ms} ms`)), ms);
      });
      return Promise.race([reader.probability(text), late]).finally(() => clearTimeout(timer));
    },
  };
}

/**
 * The reader's verdicts the word list does not overrule (measured, sentence-end.ts): whole
 * English questions read 0.06-0.93 (a few short ones lower: "How are you?" 0.003), halves cut
 * at a pause at most 0.003; in between, the word list decides.
 */
const READ_AS_FINISHED = 0.05;
const READ_AS_UNFINISHED = 0.001;
/** The languages the reader tells whole sentences from halves in (SmolLM2-135M: English). */
const READER_LANGUAGES: readonly SpokenLanguage[] = ['en'];

/** Probabilities the detector answers with; agents waits the maximum delay below the threshold. */
const FINISHED = 0.95;
const UNFINISHED = 0.05;
const THRESHOLD = 0.5;

/** Whether `text`, the visitor's turn so far, reads as finished in `language`. */
export function soundsFinished(text: string, language: SpokenLanguage): boolean {
  const trimmed = text.trim();
  if (!trimmed) return true;
  if (TRAILING_OFF.test(trimmed)) return false;
  const last = trimmed
    .toLocaleLowerCase(language)
    .match(/[\p{L}\p{M}'’]+/gu)
    ?.at(-1);
  return !last || !UNFINISHED_ENDINGS[language].includes(last);
}

/**
 * Whether the turn `text` is over: trailing off never is; in a reader's language its clear
 * verdict decides; otherwise the word list (soundsFinished).
 */
export async function turnIsOver(text: string, language: SpokenLanguage, reader?: SentenceReader): Promise<boolean> {
  const trimmed = text.trim();
  if (!trimmed) return true;
  if (TRAILING_OFF.test(trimmed)) return false;
  if (reader && READER_LANGUAGES.includes(language)) {
    // A reader that fails leaves the turn to the word list, not the visitor unanswered.
    const probability = await reader.probability(trimmed).catch(() => null);
    if (probability !== null && probability >= READ_AS_FINISHED) return true;
    if (probability !== null && probability < READ_AS_UNFINISHED) return false;
  }
  return soundsFinished(trimmed, language);
}

/**
 * The detector for one session. `language` is the session's: the pinned one, or in auto mode
 * the language last heard (read at each turn). Without a `reader`, the word list alone.
 */
export function transcriptTurnDetector(language: () => SpokenLanguage, reader?: SentenceReader): TextTurnDetector {
  return {
    model: reader ? 'likeness-transcript+smollm2' : 'likeness-transcript',
    provider: 'likeness',
    unlikelyThreshold: async () => THRESHOLD,
    supportsLanguage: async () => true,
    predictEndOfTurn: async (chatCtx) => {
      const last = [...chatCtx.items].reverse().find((item) => item.type === 'message' && item.role === 'user');
      const text = last?.type === 'message' ? (last.textContent ?? '') : '';
      return (await turnIsOver(text, language(), reader)) ? FINISHED : UNFINISHED;
    },
  };
}
