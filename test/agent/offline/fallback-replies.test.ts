// When the offline model fails a reply (agent/providers/offline/fallback-replies.ts, issue 45
// points 5 and 6), driven through OfflineLLM with a scripted model in place of node-llama-cpp's
// chat: a generation of no words is tried once more with other sampling, then replaced by a
// request to repeat in the session's language; a refusal of (or silence about) successful tool
// results is replaced by the results read out, and the refusal is never spoken; a failed call's
// apology is left alone; a reply a newer turn stopped gets no fallback. The real model's 50
// turns: tool-calls.test.ts.
import { beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, llm } from '@livekit/agents';
import { isFailedToolResult, toolResultForModel } from '../../../agent/conversation/tools.ts';
import {
  isRefusal,
  REPEAT_PLEASE,
  RETRY_SAMPLING,
  resultSentence,
  resultWords,
} from '../../../agent/providers/offline/fallback-replies.ts';
import { OfflineLLM } from '../../../agent/providers/offline/index.ts';
import type { LlamaChat, LlamaGenerateOptions, LlamaHistoryItem } from '../../../agent/providers/offline/llama.ts';
import { ToolReplyText } from '../../../agent/providers/offline/tool-reply.ts';

beforeAll(() => initializeLogger({ pretty: false, level: 'warn' }));

/** A chat that answers each generation with the next scripted text, chunk by chunk (a word at a time). */
function scriptedChat(script: (string | 'hang')[]) {
  const asked: { history: LlamaHistoryItem[]; options: LlamaGenerateOptions }[] = [];
  const chat: LlamaChat = {
    async generateResponse(history, options = {}) {
      asked.push({ history, options });
      const next = script.shift() ?? '';
      if (next === 'hang') {
        // Runs until stopped (by a newer generation).
        await new Promise<void>((resolve) =>
          options.signal?.addEventListener('abort', () => resolve(), { once: true }),
        );
        return { response: '', metadata: { stopReason: 'abort' } };
      }
      let said = '';
      for (const piece of next.match(/\S+\s*|\s+/g) ?? []) {
        if (options.signal?.aborted) break;
        said += piece;
        options.onTextChunk?.(piece);
        await Bun.sleep(1);
      }
      return { response: said, metadata: { stopReason: 'eogToken' } };
    },
    dispose() {},
  };
  return { chat, asked };
}

function model(script: (string | 'hang')[]) {
  const { chat, asked } = scriptedChat(script);
  return { model: new OfflineLLM({ chat, name: 'scripted' }), asked };
}

function conversation(question: string): llm.ChatContext {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({ role: 'system', content: 'You are Ada, the receptionist of a shop.' });
  chatCtx.addMessage({ role: 'assistant', content: "Hi, I'm Ada. How can I help you today?" });
  chatCtx.addMessage({ role: 'user', content: question });
  return chatCtx;
}

const lookup = new llm.ToolContext([
  llm.tool({
    name: 'get_order',
    description: 'Looks up an order by its number.',
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    execute: async () => 'unused',
  }),
]);

/** The conversation after a call of get_order whose result the model reads as `result`. */
function afterCall(result: string): llm.ChatContext {
  const chatCtx = conversation('Can you check the status of my order number 4417?');
  const call = llm.FunctionCall.create({ callId: 'call_1', name: 'get_order', args: '{"order_id":"4417"}' });
  chatCtx.insert(call);
  chatCtx.insert(
    llm.FunctionCallOutput.create({
      callId: 'call_1',
      name: 'get_order',
      output: JSON.stringify(result),
      isError: false,
    }),
  );
  return chatCtx;
}

async function reply(offline: OfflineLLM, chatCtx: llm.ChatContext, toolCtx?: llm.ToolContext) {
  let text = '';
  for await (const chunk of offline.chat({ chatCtx, toolCtx })) text += chunk.delta?.content ?? '';
  return text;
}

const SHIPPED = '{"status": "shipped yesterday by courier", "eta": "Friday"}';

describe('a reply of no words', () => {
  test('is tried once more with other sampling; its words are the reply', async () => {
    const { model: offline, asked } = model(['  ', 'We open at nine. ']);
    expect((await reply(offline, conversation('When do you open?'))).trim()).toBe('We open at nine.');
    expect(asked).toHaveLength(2);
    expect(asked[1]!.options.seed).toBe(asked[0]!.options.seed! + RETRY_SAMPLING.seedOffset);
    expect(asked[1]!.options.temperature).toBe(RETRY_SAMPLING.temperature);
    expect(asked[0]!.options.temperature).not.toBe(RETRY_SAMPLING.temperature);
  });

  test('twice is replaced by a request to repeat, in the language replies are in', async () => {
    for (const language of ['en', 'es'] as const) {
      const { model: offline, asked } = model(['', '']);
      offline.answerIn(language);
      expect((await reply(offline, conversation('¿Cuándo abren?'))).trim()).toBe(REPEAT_PLEASE[language]);
      expect(asked).toHaveLength(2);
    }
  });

  test('with tools too: no call and no words is tried again, then replaced', async () => {
    const { model: offline, asked } = model(['', '']);
    expect((await reply(offline, conversation('Hello?'), lookup)).trim()).toBe(REPEAT_PLEASE.en);
    expect(asked).toHaveLength(2);
    expect(asked[0]!.options.functions).toBeDefined();
  });

  test('stopped by a newer turn gets no fallback: the newer one answers', async () => {
    const { model: offline, asked } = model(['hang', 'Yes, we do. ']);
    const older = reply(offline, conversation('Do you sell shoes?'));
    while (asked.length === 0) await Bun.sleep(1);
    const newer = reply(offline, conversation('Do you sell socks?'));
    expect(await older).toBe('');
    expect((await newer).trim()).toBe('Yes, we do.');
    expect(asked).toHaveLength(2);
  });
});

describe("a reply to a tool's result", () => {
  test('that refuses a successful result says the result instead; the refusal is never spoken', async () => {
    const { model: offline } = model(["I'm sorry, but I can't assist with that. Is there anything else? "]);
    const said = await reply(offline, afterCall(SHIPPED), lookup);
    expect(said).toBe('Here is what I found: status: shipped yesterday by courier; eta: Friday.');
  });

  test('that says nothing of a successful result says the result, in the session language', async () => {
    const { model: offline } = model(['']);
    offline.answerIn('es');
    const said = await reply(offline, afterCall(SHIPPED), lookup);
    expect(said).toBe('Esto es lo que encontré: status: shipped yesterday by courier; eta: Friday.');
  });

  test('that states it is spoken as written', async () => {
    const { model: offline } = model(['Your order 4417 was shipped yesterday and arrives on Friday. ']);
    expect((await reply(offline, afterCall(SHIPPED), lookup)).trim()).toBe(
      'Your order 4417 was shipped yesterday and arrives on Friday.',
    );
  });

  test("that apologises for a failed call is the model's own", async () => {
    const failed = toolResultForModel('get_order', { outcome: 'error', result: 'the service could not be reached' });
    const { model: offline } = model(["I'm sorry, but I can't check that right now. "]);
    expect((await reply(offline, afterCall(failed), lookup)).trim()).toBe(
      "I'm sorry, but I can't check that right now.",
    );
  });
});

describe('the parts', () => {
  test('refusals are told from answers', () => {
    for (const refusal of [
      "I'm sorry, but I can't assist with that.",
      'I cannot help with that request.',
      'I can’t assist with this.',
      "I'm sorry, but I can't do that.",
      'I am unable to assist with that.',
      'Lo siento, pero no puedo ayudarte con eso.',
      'No puedo ayudar con eso.',
    ])
      expect(isRefusal(refusal)).toBe(true);
    for (const answer of [
      'Your order was shipped yesterday.',
      "I can help you with that: it's shipped.",
      "I'm sorry, your order was cancelled.",
      'Su pedido llega el viernes.',
      'I can see it arrives Friday.',
    ])
      expect(isRefusal(answer)).toBe(false);
  });

  test('results read as words: fields, lists, strings, nested, cut at a word', () => {
    expect(resultWords('{"order_id": 4417, "items": ["boots", "socks"], "paid": true}')).toBe(
      'order id: 4417; items: boots, socks; paid: true',
    );
    expect(resultWords('"Cancelled by the clinic"')).toBe('Cancelled by the clinic');
    expect(resultWords('Cancelled by the clinic')).toBe('Cancelled by the clinic');
    expect(resultWords('{"a": {"b": null, "c": "x"}}')).toBe('a: c: x');
    const long = resultWords(`${'word '.repeat(100)}`);
    expect(long.length).toBeLessThanOrEqual(241);
    expect(long.endsWith('word…')).toBe(true);
    expect(resultSentence(['{}'], 'pl')).toBe('Nic nie znalazłem.');
    expect(resultSentence(['Friday at 9.'], 'en')).toBe('Here is what I found: Friday at 9.');
  });

  test("every outcome's text but ok's reads as a failure", () => {
    expect(isFailedToolResult(toolResultForModel('get_order', { outcome: 'ok', result: SHIPPED }))).toBe(false);
    expect(isFailedToolResult(toolResultForModel('get_order', { outcome: 'ok', result: '' }))).toBe(false);
    for (const outcome of ['invalid_arguments', 'timeout', 'error'] as const)
      expect(isFailedToolResult(toolResultForModel('get_order', { outcome, result: 'x' }))).toBe(true);
  });

  test('the first sentence is held until whole, then let through or replaced', () => {
    const said: string[] = [];
    const text = new ToolReplyText(
      (piece) => said.push(piece),
      2,
      false,
      (first) => (first.startsWith('No') ? 'Replaced.' : null),
    );
    expect(text.add('Your order ')).toBe(true);
    expect(said).toEqual([]);
    expect(text.add('shipped. It ')).toBe(true);
    expect(said.join('')).toBe('Your order shipped. It ');
    const refused: string[] = [];
    const other = new ToolReplyText(
      (piece) => refused.push(piece),
      2,
      false,
      () => 'Replaced.',
    );
    expect(other.add('No. ')).toBe(false);
    expect(other.add('More. ')).toBe(false);
    expect(refused).toEqual(['Replaced.']);
    expect(other.spokeWords).toBe(true);
  });
});
