// When the offline model fails a reply (agent/providers/offline/fallback-replies.ts and
// result-replies.ts, issue 45 points 5 and 6), driven through OfflineLLM with a scripted model
// in place of node-llama-cpp's chat: a generation of no words is tried once more with other
// sampling, then replaced by a request to repeat in the session's language; a reply a newer
// turn stopped gets no fallback. After tools' results the reply is checked whole before it is
// spoken: one that misstates or refuses them is never heard, the results are read out instead;
// a failed call gets a fixed sentence without asking the model; a call done with nothing to
// tell, another. The real model: every-turn-answered.test.ts, bench/tools/results.ts.
import { beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, llm } from '@livekit/agents';
import { TOOL_FILLERS, toolResultForModel, toolResultKind } from '../../../agent/conversation/tools.ts';
import { isRefusal, REPEAT_PLEASE, RETRY_SAMPLING } from '../../../agent/providers/offline/fallback-replies.ts';
import { OfflineLLM } from '../../../agent/providers/offline/index.ts';
import type { LlamaChat, LlamaGenerateOptions, LlamaHistoryItem } from '../../../agent/providers/offline/llama.ts';
import {
  COULD_NOT,
  replyToResults,
  resultSentence,
  resultWords,
  statesResults,
  TELL_ME_MORE,
} from '../../../agent/providers/offline/result-replies.ts';
import { exampleCopied, withoutExamples } from '../../../agent/providers/offline/tool-calls.ts';

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

  test('a call written out that does not read as one is never spoken: tried again, then the visitor is asked', async () => {
    // Seen offline in Spanish: the argument ran to the token limit, and the JSON was said aloud.
    const cut = `{"name": "get_order", "arguments": {"order_id": "${'4'.repeat(40)}`;
    const { model: offline, asked } = model([cut, cut]);
    const said = await reply(offline, conversation('¿Puedes ver mi pedido?'), lookup);
    expect(said).not.toContain('{');
    expect(said).toBe(`${TOOL_FILLERS.en}\n${REPEAT_PLEASE.en}`);
    expect(asked).toHaveLength(2);
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

  test('that misstates it (a cancelled one still on) says the result instead', async () => {
    const { model: offline } = model(['Yes, your appointment on Tuesday is still on. ']);
    expect(await reply(offline, afterCall('Cancelled by the clinic.'), lookup)).toBe(
      'Here is what I found: Cancelled by the clinic.',
    );
  });

  test('that says nothing of a successful result says the result, in the session language', async () => {
    const { model: offline } = model(['']);
    offline.answerIn('es');
    const said = await reply(offline, afterCall(SHIPPED), lookup);
    expect(said).toBe('Esto es lo que encontré: status: shipped yesterday by courier; eta: Friday.');
  });

  test('that states it is spoken as written', async () => {
    const { model: offline } = model(['Your order 4417 was shipped yesterday by courier and arrives on Friday. ']);
    expect((await reply(offline, afterCall(SHIPPED), lookup)).trim()).toBe(
      'Your order 4417 was shipped yesterday by courier and arrives on Friday.',
    );
  });

  test('after a failed call is a fixed sentence, and the model is not asked', async () => {
    const failed = toolResultForModel('get_order', { outcome: 'error', result: 'the service could not be reached' });
    const { model: offline, asked } = model(['Your order 4417 is on its way. ']);
    offline.answerIn('es');
    expect(await reply(offline, afterCall(failed), lookup)).toBe(COULD_NOT.es);
    expect(asked).toHaveLength(0);
  });
});

describe("a call with a description's example as its argument", () => {
  const withExample = new llm.ToolContext([
    llm.tool({
      name: 'get_appointment',
      description: "Looks up the visitor's appointment on a date.",
      parameters: {
        type: 'object',
        properties: { date: { type: 'string', description: 'The day of the appointment, e.g. Tuesday or 2025-05-06' } },
        required: ['date'],
      },
      execute: async () => 'unused',
    }),
  ]);

  async function called(question: string, written: string) {
    const { model: offline, asked } = model([written]);
    let text = '';
    const calls: llm.FunctionCall[] = [];
    for await (const chunk of offline.chat({ chatCtx: conversation(question), toolCtx: withExample })) {
      text += chunk.delta?.content ?? '';
      calls.push(...(chunk.delta?.toolCalls ?? []));
    }
    return { text, calls, asked };
  }

  test('is never seen by the model', async () => {
    const { asked } = await called('Is my appointment still on?', 'Which day?');
    const functions = asked[0]!.options.functions!;
    expect(JSON.stringify(functions)).not.toContain('2025-05-06');
    expect(JSON.stringify(functions)).toContain('The day of the appointment');
  });

  test('that the model could not have read is made (translated: "sábado" is Saturday, as in a cut example)', async () => {
    const { calls } = await called(
      '¿Sigue en pie mi cita del martes?',
      '{"name": "get_appointment", "arguments": {"date": "Tuesday"}}',
    );
    expect(calls.map((call) => JSON.parse(call.args))).toEqual([{ date: 'Tuesday' }]);
  });

  test('left in a description the model read is not made: the visitor is asked instead', async () => {
    const unmarked = new llm.ToolContext([
      llm.tool({
        name: 'get_appointment',
        description: "Looks up the visitor's appointment on a date.",
        parameters: {
          type: 'object',
          properties: { date: { type: 'string', description: 'The day: Tuesday or 2025-05-06 work' } },
          required: ['date'],
        },
        execute: async () => 'unused',
      }),
    ]);
    const { model: offline } = model(['{"name": "get_appointment", "arguments": {"date": "2025-05-06"}}']);
    let text = '';
    const calls: llm.FunctionCall[] = [];
    for await (const chunk of offline.chat({
      chatCtx: conversation('Is my appointment still on?'),
      toolCtx: unmarked,
    })) {
      text += chunk.delta?.content ?? '';
      calls.push(...(chunk.delta?.toolCalls ?? []));
    }
    expect(calls).toEqual([]);
    // The filler went out as the call began; the call is not made, the visitor is asked.
    expect(text).toBe(`${TOOL_FILLERS.en}\n${TELL_ME_MORE.en}`);
  });

  test('left in a description the model read (no "e.g." to tell it by) is told', () => {
    const tool = { parameters: { properties: { date: { description: 'The day: Tuesday or 2025-05-06 work' } } } };
    expect(exampleCopied({ params: { date: '2025-05-06' } }, tool, 'Is my appointment still on?')).toBe('2025-05-06');
    expect(
      exampleCopied({ params: { date: '2025-05-06' } }, tool, 'Is my appointment on 2025-05-06 still on?'),
    ).toBeNull();
  });

  test('is made when the visitor said the value', async () => {
    const { calls } = await called(
      'Is my appointment on Tuesday still on?',
      '{"name": "get_appointment", "arguments": {"date": "Tuesday"}}',
    );
    expect(calls.map((call) => JSON.parse(call.args))).toEqual([{ date: 'Tuesday' }]);
  });

  test('examples leave descriptions in their forms, and only examples do', () => {
    expect(withoutExamples('The day of the appointment, e.g. Tuesday or 2025-05-06')).toBe(
      'The day of the appointment',
    );
    expect(withoutExamples('The order number (for example 4417).')).toBe('The order number.');
    expect(withoutExamples('An email such as ana@example.com. Required.')).toBe('An email. Required.');
    expect(withoutExamples('El día, por ejemplo martes')).toBe('El día');
    expect(withoutExamples('Looks up orders like a clerk would')).toBe('Looks up orders like a clerk would');
    expect(withoutExamples("The visitor's email address")).toBe("The visitor's email address");
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

  test('a reply states results when it says their numbers, most of their words, and their negation', () => {
    expect(
      statesResults('It opens at 9:00 and closes at 13:00 on Saturday.', ['{"opens": "09:00", "closes": "13:00"}']),
    ).toBe(true);
    expect(statesResults('It opens at 10:00 on Saturday.', ['{"opens": "09:00"}'])).toBe(false);
    expect(statesResults('Your appointment was cancelled by the clinic.', ['Cancelled by the clinic.'])).toBe(true);
    expect(statesResults('Your appointment is still on.', ['Cancelled by the clinic.'])).toBe(false);
    expect(statesResults('Yes, we have red gloves.', ['{"in_stock": false}'])).toBe(false);
    expect(statesResults("Sorry, we don't have red gloves.", ['{"in_stock": false}'])).toBe(true);
    expect(statesResults('Ні, такого замовлення немає.', ['Замовлення не знайдено.'])).toBe(true);
    expect(statesResults('Так, замовлення знайдено.', ['Замовлення не знайдено.'])).toBe(false);
  });

  test('after a call done with nothing to tell: a reply that says it is done, or a fixed one', () => {
    const done = [{ kind: 'done' as const, text: 'send_leaflet was done.' }];
    expect(replyToResults("I've sent the leaflet to ana@example.com.", done, 'en')).toBe(
      "I've sent the leaflet to ana@example.com.",
    );
    expect(replyToResults('Sure, go ahead and send it.', done, 'en')).toBe("Done, that's taken care of.");
    expect(replyToResults("I couldn't send it.", done, 'en')).toBe("Done, that's taken care of.");
  });

  test('results read as words: fields, yes and no, lists, strings, nested, cut at a word', () => {
    expect(resultWords('{"order_id": 4417, "items": ["boots", "socks"], "paid": true}')).toBe(
      'order id: 4417; items: boots, socks; paid: yes',
    );
    expect(resultWords('{"paid": false}', 'es')).toBe('paid: no');
    expect(resultWords('"Cancelled by the clinic"')).toBe('Cancelled by the clinic');
    expect(resultWords('Cancelled by the clinic')).toBe('Cancelled by the clinic');
    expect(resultWords('{"a": {"b": null, "c": "x"}}')).toBe('a: c: x');
    const long = resultWords(`${'word '.repeat(100)}`);
    expect(long.length).toBeLessThanOrEqual(241);
    expect(long.endsWith('word…')).toBe(true);
    expect(resultSentence(['{}'], 'pl')).toBe('Nic nie znalazłem.');
    expect(resultSentence(['Friday at 9.'], 'en')).toBe('Here is what I found: Friday at 9.');
  });

  test("every outcome's text says what it is", () => {
    expect(toolResultKind(toolResultForModel('get_order', { outcome: 'ok', result: SHIPPED }))).toBe('ok');
    expect(toolResultKind(toolResultForModel('get_order', { outcome: 'ok', result: '' }))).toBe('done');
    expect(toolResultKind(toolResultForModel('get_order', { outcome: 'invalid_arguments', result: 'x' }))).toBe(
      'not_called',
    );
    for (const outcome of ['timeout', 'error'] as const)
      expect(toolResultKind(toolResultForModel('get_order', { outcome, result: 'x' }))).toBe('failed');
  });
});
