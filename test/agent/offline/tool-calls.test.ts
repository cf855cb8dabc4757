// The offline reply model with tools (agent/providers/offline/tool-calls.ts and llm.ts): the
// real Qwen2.5-Coder-0.5B through node-llama-cpp's function calling calls the tool a question
// asks for, with its argument, as agents' FunctionCall; after the result it answers in words;
// small talk gets words, not a call; and a turn's passages (knowledge.ts) are answered from.
// The chat history keeps calls and results only with tools. Needs the models the bootstrap
// installs (`npm test` does).
import { describe, expect, test } from 'bun:test';
import { llm, voice } from '@livekit/agents';
import { onToolOutput } from '../../../agent/agents-adapter/index.ts';
import { addPassages } from '../../../agent/conversation/knowledge.ts';
import { TOOL_FILLERS } from '../../../agent/conversation/tools.ts';
import { type OfflineLLM, toLlamaHistory } from '../../../agent/providers/offline/index.ts';
import { FOUND } from '../../../agent/providers/offline/result-replies.ts';
import { gbnfSchema, parseTextCall } from '../../../agent/providers/offline/tool-calls.ts';
import { withOfflineLanguageModel } from './language-model.ts';

let model: OfflineLLM;
withOfflineLanguageModel({ threads: 2 }, (loaded) => {
  model = loaded;
});

const INSTRUCTIONS =
  'You are Ada, the receptionist of a dental clinic.\n\nYou are talking with a visitor in a live voice conversation. Your words are spoken aloud: answer in one to three short sentences, without lists, markdown, emoji or stage directions.';
/** The one tool of these tests; `answer` is what it returns when an AgentSession calls it. */
const appointmentTool = (answer = 'unused') =>
  llm.tool({
    name: 'get_appointment',
    description: "Looks up the visitor's appointment on a date.",
    parameters: {
      type: 'object',
      properties: { date: { type: 'string', description: 'The day of the appointment' } },
      required: ['date'],
    },
    execute: async () => answer,
  });
const tools = new llm.ToolContext([appointmentTool()]);

function conversation(question: string): llm.ChatContext {
  const chatCtx = new llm.ChatContext();
  chatCtx.addMessage({ role: 'system', content: INSTRUCTIONS });
  chatCtx.addMessage({ role: 'assistant', content: "Hi, I'm Ada. How can I help you today?" });
  chatCtx.addMessage({ role: 'user', content: question });
  return chatCtx;
}

async function reply(chatCtx: llm.ChatContext, toolCtx?: llm.ToolContext) {
  let text = '';
  const calls: llm.FunctionCall[] = [];
  for await (const chunk of model.chat({ chatCtx, toolCtx })) {
    text += chunk.delta?.content ?? '';
    calls.push(...(chunk.delta?.toolCalls ?? []));
  }
  return { text: text.trim(), calls };
}

describe('the offline model with a tool', () => {
  test('a typed question the tool answers is a call with its argument; the answer uses the result', async () => {
    const chatCtx = conversation('Is my appointment on Tuesday still on?');
    const first = await reply(chatCtx, tools);
    // Said as the model began writing the call: the visitor hears it while the call runs.
    expect(first.text).toBe(TOOL_FILLERS.en);
    expect(first.calls.map((call) => call.name)).toEqual(['get_appointment']);
    expect(JSON.parse(first.calls[0]!.args).date).toMatch(/tuesday/i);

    chatCtx.insert(first.calls[0]!);
    chatCtx.insert(
      llm.FunctionCallOutput.create({
        callId: first.calls[0]!.callId,
        name: 'get_appointment',
        output: JSON.stringify('Tuesday at 14:30 with Dr. Lee: confirmed.'),
        isError: false,
      }),
    );
    const second = await reply(chatCtx, tools);
    console.log(`offline follow-up: ${second.text}`);
    expect(second.calls).toEqual([]);
    expect(second.text).not.toContain('{');
    expect(second.text).toMatch(/14:30|Lee/);
  }, 120_000);

  test("read ahead with its tools, a turn that may call evaluates little more than the visitor's words", async () => {
    const elsewhere = async () => {
      // Another conversation in the sequence, as a fresh job's process holds.
      const other = new llm.ChatContext();
      other.addMessage({ role: 'system', content: 'You are a weather bot.' });
      other.addMessage({ role: 'user', content: 'Will it rain?' });
      // On both of the model's sequences: the words', and the one of turns that may call.
      await reply(other);
      await reply(other, tools);
    };
    const question = 'Is my appointment on Friday still on?';
    const greeting = "Hi, I'm Ada. How can I help you today?";
    await elsewhere();
    await model.prime(INSTRUCTIONS, greeting);
    const readWithout = await reply(conversation(question), tools);
    const withoutTools = model.lastEvaluatedTokens;
    await elsewhere();
    await model.prime(INSTRUCTIONS, greeting, tools);
    const readWith = await reply(conversation(question), tools);
    const withTools = model.lastEvaluatedTokens;
    console.log(
      `prompt tokens evaluated by the first call turn: ${withoutTools} read ahead without the tools, ${withTools} with`,
    );
    for (const turn of [readWithout, readWith])
      expect(turn.calls.map((call) => call.name)).toEqual(['get_appointment']);
    // The question and the turn's template: the instructions and the function's documentation were read ahead.
    expect(withTools).toBeLessThan(40);
    expect(withoutTools).toBeGreaterThan(withTools + 100);
  }, 120_000);

  test("the answer is written as the call's result comes in: said when agents asks if written by then, else the result is read out at once; another result is answered anew", async () => {
    let generations = 0;
    let latest: Promise<unknown> = Promise.resolve();
    const generate = model._generate.bind(model);
    model._generate = (...args) => {
      generations++;
      const generation = generate(...args);
      latest = generation.catch(() => undefined);
      return generation;
    };
    try {
      // As agents has it when it asks for the answer: the filler, the call, its output.
      const afterResult = async (question: string, result: string, { arrived = result, written = false } = {}) => {
        const chatCtx = conversation(question);
        const first = await reply(chatCtx, tools);
        expect(first.calls).toHaveLength(1);
        const output = (text: string) =>
          llm.FunctionCallOutput.create({
            callId: first.calls[0]!.callId,
            name: 'get_appointment',
            output: JSON.stringify(text),
            isError: false,
          });
        const before = generations;
        model.toolResultIn(output(arrived));
        const writtenAhead = generations - before;
        if (written) await latest;
        chatCtx.addMessage({ role: 'assistant', content: first.text });
        chatCtx.insert(first.calls[0]!);
        chatCtx.insert(output(result));
        const answer = await reply(chatCtx, tools);
        return { writtenAhead, writtenWhenAsked: generations - before - writtenAhead, text: answer.text };
      };
      const appointment = 'Tuesday at 14:30 with Dr. Lee: confirmed.';
      const ready = await afterResult('Is my appointment on Tuesday still on?', appointment, { written: true });
      expect(ready).toMatchObject({ writtenAhead: 1, writtenWhenAsked: 0 });
      expect(ready.text).toMatch(/14:30|Lee/);
      expect(ready.text).not.toStartWith(FOUND.en);
      const writing = await afterResult('Is my appointment on Tuesday still on?', appointment);
      expect(writing).toMatchObject({ writtenAhead: 1, writtenWhenAsked: 0 });
      expect(writing.text).toBe(`${FOUND.en} ${appointment}`);
      // The chat holds another result than the one that came in: that answer is not taken.
      const anew = await afterResult(
        'Is my appointment on Friday still on?',
        'Friday at 09:15 with Dr. Kim: confirmed.',
        {
          arrived: appointment,
          written: true,
        },
      );
      expect(anew).toMatchObject({ writtenAhead: 1, writtenWhenAsked: 1 });
      expect(anew.text).toMatch(/09:15|Kim/);
      expect(anew.text).not.toMatch(/14:30|Lee/);
    } finally {
      model._generate = generate;
    }
  }, 120_000);

  test('in an AgentSession each tool output reaches the model as its call completes (agents-adapter onToolOutput): the answer is begun then, not when agents asks', async () => {
    let generations = 0;
    const generate = model._generate.bind(model);
    model._generate = (...args) => {
      generations++;
      return generate(...args);
    };
    const agent = new voice.Agent({
      instructions: INSTRUCTIONS,
      tools: [appointmentTool('Tuesday at 14:30 with Dr. Lee: confirmed.')],
    });
    const session = new voice.AgentSession({ llm: model });
    const outputs: string[] = [];
    let generationsAtOutput = -1;
    onToolOutput(session, (output) => {
      outputs.push(output.output);
      generationsAtOutput = generations;
      model.toolResultIn(output);
    });
    try {
      await session.start({ agent });
      const result = session.run({ userInput: 'Is my appointment on Tuesday still on?' });
      await result.wait();
      const said = result.events
        .flatMap((event) =>
          event.type === 'message' && event.item.role === 'assistant' ? [event.item.textContent] : [],
        )
        .join(' ');
      expect(outputs).toEqual([expect.stringContaining('14:30')]);
      // The call's turn, then the answer, begun once: as the output came in, not when asked.
      expect({ generationsAtOutput, generations }).toEqual({ generationsAtOutput: 1, generations: 2 });
      expect(said).toMatch(/14:30|Lee/);
    } finally {
      model._generate = generate;
      await session.close();
    }
  }, 120_000);

  test('a question no tool answers gets words, not a call', async () => {
    const { text, calls } = await reply(conversation('What is the capital of France?'), tools);
    expect(calls).toEqual([]);
    expect(text).toMatch(/paris/i);
  }, 60_000);

  test("a turn's passages are answered from (quoted in the visitor's turn, knowledge.ts's rule after it)", async () => {
    const chatCtx = conversation('How much does a check-up cost?');
    addPassages(
      chatCtx,
      chatCtx.items.at(-1) as llm.ChatMessage,
      [{ document_id: 'doc_1', document_name: 'Prices', text: 'A dental check-up costs 45 euros.', score: 0.7 }],
      'en',
    );
    const { text } = await reply(chatCtx);
    console.log(`offline answer from a passage: ${text}`);
    expect(text).toMatch(/45/);
  }, 60_000);
});

describe('the history and schemas the model is given', () => {
  test('calls and results are in the model turns only with tools', () => {
    const chatCtx = conversation('Is my appointment on Tuesday still on?');
    const call = llm.FunctionCall.create({ callId: 'c1', name: 'get_appointment', args: '{"date":"Tuesday"}' });
    chatCtx.insert(call);
    chatCtx.insert(
      llm.FunctionCallOutput.create({ callId: 'c1', name: 'get_appointment', output: '"On."', isError: false }),
    );
    expect(toLlamaHistory(chatCtx, { tools: true }).at(-1)).toEqual({
      type: 'model',
      response: [{ type: 'functionCall', name: 'get_appointment', params: { date: 'Tuesday' }, result: 'On.' }],
    });
    expect(toLlamaHistory(chatCtx).at(-1)).toEqual({ type: 'user', text: 'Is my appointment on Tuesday still on?' });
  });

  test('a call written as JSON without the tags is read as one, when it names a tool', () => {
    expect(parseTextCall('{"name": "get_appointment", "arguments": {"date": "Tuesday"}}', ['get_appointment'])).toEqual(
      {
        name: 'get_appointment',
        params: { date: 'Tuesday' },
      },
    );
    expect(parseTextCall('```json\n{"name": "other", "arguments": {}}\n```', ['get_appointment'])).toBeNull();
    expect(parseTextCall('Sure, I can check that.', ['get_appointment'])).toBeNull();
  });

  test("a tool's schema is cut to what GBNF expresses", () => {
    expect(
      gbnfSchema({
        type: 'object',
        properties: { date: { type: 'string', format: 'date', pattern: '^\\d' }, n: { description: 'any' } },
        required: ['date'],
      }),
    ).toEqual({
      type: 'object',
      properties: {
        date: { type: 'string', format: 'date' },
        n: { description: 'any', type: ['string', 'number', 'boolean', 'null'] },
      },
      required: ['date'],
      additionalProperties: false,
    });
  });
});
