// What the offline model is shown for a reply: the chat context as a llama history, cut down to
// what a 0.5B model answers well from (smallModelPrompt), and what every reply's prompt starts
// with (promptStart, also what OfflineLLM.prime reads ahead). Quoted data (documents' passages,
// the visitor's app's notes) goes into the visitor's last turn, never among the instructions
// (withQuotedData).
import type { llm } from '@livekit/agents';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { isQuotedData } from '../../conversation/quoted-data.ts';
import type { LlamaFunctionCall, LlamaHistoryItem } from './llama.ts';
import { llamaFunctionCall, setFunctionResult, TOOLS_RULE } from './tool-calls.ts';

/**
 * The chat context as a llama chat history: text only (no vision), roles merged. Instructions
 * go first, merged; but instructions that come after the conversation's last turn are a reply's
 * own (a `context` order with `respond`: agent/conversation/orders.ts) and stay last, for
 * smallModelPrompt to ask with. With `tools`, function calls and their results join the model's
 * turns (tool-calls.ts); without, they are left out (a session without tools has none).
 */
export function toLlamaHistory(chatCtx: llm.ChatContext, { tools = false } = {}): LlamaHistoryItem[] {
  const system: string[] = [];
  const turns: LlamaHistoryItem[] = [];
  let trailing: string[] = [];
  const calls = new Map<string, LlamaFunctionCall>();
  for (const item of chatCtx.items) {
    if (tools && item.type === 'function_call') {
      system.push(...trailing);
      trailing = [];
      const call = llamaFunctionCall(item);
      calls.set(item.callId, call);
      const last = turns.at(-1);
      if (last?.type === 'model') last.response.push(call);
      else turns.push({ type: 'model', response: [call] });
      continue;
    }
    if (tools && item.type === 'function_call_output') {
      setFunctionResult(calls, item);
      continue;
    }
    if (item.type !== 'message') continue; // handoffs, and tool calls when the chat has no tools
    if (isQuotedData(item)) continue; // withQuotedData's
    const text = item.content
      .filter((part): part is string => typeof part === 'string')
      .join('\n')
      .trim();
    if (!text) continue; // e.g. a user turn that was only a camera image
    if (item.role === 'system' || item.role === 'developer') {
      // Instructions may arrive late: the model reads one system message first.
      if (turns.length > 0) trailing.push(text);
      else system.push(text);
      continue;
    }
    system.push(...trailing);
    trailing = [];
    const last = turns.at(-1);
    if (item.role === 'user') {
      if (last?.type === 'user') last.text += `\n${text}`;
      else turns.push({ type: 'user', text });
    } else {
      if (last?.type === 'model' && typeof last.response.at(-1) === 'string')
        last.response[last.response.length - 1] += ` ${text}`;
      else if (last?.type === 'model') last.response.push(text);
      else turns.push({ type: 'model', response: [text] });
    }
  }
  return [
    ...(system.length ? [{ type: 'system' as const, text: system.join('\n\n') }] : []),
    ...turns,
    ...(trailing.length ? [{ type: 'system' as const, text: trailing.join('\n\n') }] : []),
  ];
}

/** The text of the chat context's quoted-data messages, in order ('' without any). */
export function quotedDataOf(chatCtx: llm.ChatContext): string {
  return chatCtx.items
    .filter(isQuotedData)
    .map((item) => (item as llm.ChatMessage).textContent ?? '')
    .filter(Boolean)
    .join('\n');
}

/**
 * The prompt with the quoted data before the words of its last turn, the visitor's (or the one
 * asked for them): at the visitor's rank, as the cloud models get it. Added after
 * smallModelPrompt has picked the turns, so a short follow-up is still read as one.
 */
export function withQuotedData(prompt: LlamaHistoryItem[], data: string): LlamaHistoryItem[] {
  const last = prompt.at(-1);
  if (!data || last?.type !== 'user') return prompt;
  return [...prompt.slice(0, -1), { type: 'user', text: `${data}\n\n${last.text}` }];
}

/**
 * One exchange in the reply's language, shown before the conversation: SmolLM2-135M answered
 * "What is the capital of Italy?" in Italian and drifted into French or Spanish in English
 * sessions; one plain example of a short answer in the pinned language keeps it there
 * (bench/conversation/eval, text only: English right answers 19 → 28 of 34, replies in
 * another language 10 → 0).
 */
const LANGUAGE_EXAMPLES: Record<SpokenLanguage, [question: string, answer: string]> = {
  en: ['What is two plus two?', 'Two plus two is four.'],
  es: ['¿Cuánto es dos más dos?', 'Dos más dos son cuatro.'],
  pl: ['Ile to jest dwa plus dwa?', 'Dwa plus dwa to cztery.'],
  uk: ['Скільки буде два плюс два?', 'Два плюс два — чотири.'],
};
/** A visitor's turn this short is a follow-up ("Sorry, at what time?"): it needs the exchange before it. */
const FOLLOW_UP_MAX_WORDS = 4;
/**
 * A visitor's turn as the offline model reads it: its last this many characters. Spoken turns
 * are shorter (30 s of speech is ~450); a typed message of chat's 2,000 took the 0.5B model
 * 10–13 s of both cores to read before a word of its reply (junk and emoji make many tokens a
 * character), and a question, when there is one, ends the message.
 */
export const VISITOR_TURN_MAX_CHARS = 600;

/** `item`, a visitor's turn cut to its last VISITOR_TURN_MAX_CHARS characters (on a whole character). */
function readable(item: LlamaHistoryItem): LlamaHistoryItem {
  if (item.type !== 'user' || item.text.length <= VISITOR_TURN_MAX_CHARS) return item;
  let end = item.text.slice(-VISITOR_TURN_MAX_CHARS);
  if (/^[\uDC00-\uDFFF]/.test(end)) end = end.slice(1); // half of a surrogate pair
  return { type: 'user', text: `…${end}` };
}
/**
 * The visitor's turn a reply nobody asked for is prompted with (a `context` order's `respond`,
 * agent/conversation/orders.ts): the model answers a user turn (after a reply of its own it
 * would only lengthen that one), and asked for news it tells what it was just given ("Go on."
 * got "Sure, go on.").
 */
const ANY_NEWS: Record<SpokenLanguage, string> = {
  en: 'Any news for me?',
  es: '¿Alguna novedad para mí?',
  pl: 'Masz dla mnie jakieś nowości?',
  uk: 'Є для мене якісь новини?',
};

/**
 * What the offline model is shown for a reply: the instructions, the language example, the greeting,
 * the visitor's last turn, and the exchange before it only for a follow-up. Older turns go:
 * the 135M model copied its own earlier replies ("The Capital de Earth es la Capital de
 * Earth." to every question after a few turns); with the last exchange kept for every
 * question, 23 of 34 were right against 28 without.
 */
export function smallModelPrompt(
  history: LlamaHistoryItem[],
  language: SpokenLanguage,
  { example = true, greeting: withGreeting = true } = {},
): LlamaHistoryItem[] {
  const system = history[0]?.type === 'system' ? history[0] : undefined;
  const tail = history.at(-1);
  // A reply's own instructions, after the last turn (toLlamaHistory).
  const own = history.length > 1 && tail?.type === 'system' ? tail.text : undefined;
  const turns = history.slice(system ? 1 : 0, own === undefined ? undefined : -1);
  const last = turns.at(-1);
  const greeting = turns[0]?.type === 'model' ? turns[0] : undefined;
  const afterGreeting = turns.slice(greeting ? 1 : 0);
  // The last turn is a reply (not the greeting alone): the next is one nobody asked for. Asked
  // in the visitor's turn, the 0.5B model carries out what it is told (told the same as a system
  // message after its reply, it told 1 of 4 pieces of news; as the visitor's turn, 4 of 4).
  if (last?.type === 'model' && (afterGreeting.length > 0 || own !== undefined))
    return [
      ...promptStart(system, withGreeting ? greeting : undefined, language, example),
      ...afterGreeting.slice(-2).map(readable),
      { type: 'user', text: own ?? ANY_NEWS[language] },
    ];
  if (own !== undefined) {
    // Told something for the reply to a question: read with the instructions.
    const merged = { type: 'system' as const, text: [system?.text, own].filter(Boolean).join('\n\n') };
    return smallModelPrompt([merged, ...turns], language, { example, greeting: withGreeting });
  }
  if (last?.type !== 'user') return history;
  const earlier = afterGreeting.slice(0, -1);
  const followUp = last.text.split(/\s+/).length <= FOLLOW_UP_MAX_WORDS ? earlier.slice(-2) : [];
  return [
    ...promptStart(system, withGreeting ? greeting : undefined, language, example),
    ...followUp.map(readable),
    readable(last),
  ];
}

/**
 * What every reply's prompt starts with: the instructions, the language example, the greeting.
 * Neither example nor greeting with tools: after any turn of its own in words the 0.5B model
 * answered "Is my appointment on Tuesday still on?" with a made-up "Yes" instead of calling
 * (with the example 0 of 2 questions for a tool called, with the greeting 0 of 2; without
 * either 2 of 2, and no call for small talk or a general question).
 */
export function promptStart(
  system: LlamaHistoryItem | undefined,
  greeting: LlamaHistoryItem | undefined,
  language: SpokenLanguage,
  example = true,
): LlamaHistoryItem[] {
  const [question, answer] = LANGUAGE_EXAMPLES[language];
  return [
    ...(system ? [system] : []),
    ...(example
      ? [
          { type: 'user' as const, text: question },
          { type: 'model' as const, response: [answer] },
        ]
      : []),
    ...(greeting ? [greeting] : []),
  ];
}

/** A prompt that may call: the tools' rule after the instructions (what OfflineLLM.prime reads ahead too). */
export function withToolsRule(prompt: LlamaHistoryItem[]): LlamaHistoryItem[] {
  return prompt.map((item, index) =>
    index === 0 && item.type === 'system' ? { type: 'system' as const, text: `${item.text}\n\n${TOOLS_RULE}` } : item,
  );
}
