// A wire-level fake of the OpenAI HTTP API as @livekit/agents-plugin-openai 1.9.0 uses it
// (through the `openai` 6.x client): GET /v1/models (the LLM's prewarm), POST /v1/chat/completions
// streamed as SSE `chat.completion.chunk`s (role first, word-sized content deltas, a
// `finish_reason: "stop"` chunk, a usage chunk when `stream_options.include_usage`, `[DONE]`) or
// as one `chat.completion`, POST /v1/audio/transcriptions (multipart, the STT with
// `useRealtime: false`) and POST /v1/audio/speech (the TTS asks for `pcm`: 24 kHz s16le mono).
// Replies come from a responder the test sets; transcripts from a script. A client that
// disconnects mid-stream (barge-in) is recorded as `aborted` and nothing more is written.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: a wire fake of OpenAI's API: one handler per endpoint the plugin calls (chat, speech, transcription, embeddings), each as the real one answers
import { parseWav, type ScriptedUtterance, speechLikeAudio, wavFile } from './speech.ts';

export interface ChatRecord {
  at: number;
  authorization: string | null;
  model: string;
  stream: boolean;
  includeUsage: boolean;
  body: Record<string, unknown>;
  messages: { role: string; content: unknown }[];
  /** Text of every system/developer message, joined by newlines. */
  system: string;
  /** Text of each user message, in order. */
  userTexts: string[];
  /** Every image_url part: which message carried it, the URL up to `base64,`, its length. */
  images: { messageIndex: number; prefix: string; length: number }[];
  reply?: string;
  /** The tool calls the responder answered with (FakeToolCallReply), as sent. */
  toolCallsSent?: FakeToolCall[];
  /** The tools the request offered, by name (`tools[].function.name`). */
  toolNames: string[];
  /** Every `tool` message: a tool call's result as the model is given it. */
  toolResults: { callId: string; content: string }[];
  /** Content deltas written (streaming), out of `tokens`. */
  chunksSent: number;
  tokens: number;
  firstTokenAt?: number;
  finishedAt?: number;
  aborted: boolean;
  abortedAt?: number;
  /** The status a responder's FakeChatFailure answered with. */
  failedWith?: number;
}

export interface TranscriptionRecord {
  at: number;
  authorization: string | null;
  model: string;
  language?: string;
  prompt?: string;
  responseFormat: string;
  fileName: string;
  fileType: string;
  /** Duration of the uploaded WAV; undefined when the file was not a WAV. */
  audioSeconds?: number;
  text: string;
}

export interface SpeechRecord {
  at: number;
  authorization: string | null;
  model: string;
  voice: string;
  input: string;
  responseFormat: string;
  speed?: number;
  instructions?: string;
  audioSeconds: number;
}

/** One call the model makes; `arguments` an object (sent as its JSON) or raw text (sent as is: broken JSON). */
export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: Record<string, unknown> | string;
}

/** A responder's answer with tool calls (streamed as OpenAI's `tool_calls` deltas, finish_reason `tool_calls`). */
export interface FakeToolCallReply {
  content?: string;
  toolCalls: FakeToolCall[];
  /** The stream holds still for `ms` after its first `afterWords` words (a model slow to write on). */
  pause?: { afterWords: number; ms: number };
}

export type ChatResponder = (request: ChatRecord) => string | FakeToolCallReply | Promise<string | FakeToolCallReply>;

/** Thrown by a responder: the chat is answered with this HTTP status and an OpenAI error body. */
export class FakeChatFailure extends Error {
  constructor(
    readonly status: number,
    message = 'The server had an error while processing your request.',
  ) {
    super(message);
  }
}

export interface FakeOpenAIOptions {
  /** When set, only `Bearer <apiKey>` is accepted (401 otherwise). */
  apiKey?: string;
  firstTokenDelayMs?: number;
  tokenIntervalMs?: number;
  models?: string[];
}

export interface FakeOpenAI {
  /** The plugins' `baseURL`, ending in /v1. */
  url: string;
  chats: ChatRecord[];
  transcriptions: TranscriptionRecord[];
  speeches: SpeechRecord[];
  /** Each POST /v1/embeddings: its model, `dimensions` and inputs. */
  embeddings: { model: string; dimensions?: number; input: string[] }[];
  /** Every request as `METHOD /path`, in arrival order. */
  requests: string[];
  firstTokenDelayMs: number;
  tokenIntervalMs: number;
  respond(responder: ChatResponder): void;
  scriptTranscriptions(...utterances: ScriptedUtterance[]): void;
  stop(): Promise<void>;
}

const DEFAULT_REPLY = 'Hello! It is nice to meet you.';
const DEFAULT_TRANSCRIPT: ScriptedUtterance = { transcript: 'Hello, how are you today?', language: 'en' };
const SPEECH_RATE = 24_000;
/** Whisper names languages in verbose_json. */
const LANGUAGE_NAMES: Record<string, string> = {
  en: 'english',
  es: 'spanish',
  pl: 'polish',
  uk: 'ukrainian',
  de: 'german',
  fr: 'french',
};

const now = () => performance.timeOrigin + performance.now();

function oaiError(status: number, message: string, code: string | null = null, param: string | null = null) {
  return Response.json({ error: { message, type: 'invalid_request_error', param, code } }, { status });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .filter((p): p is { type: 'text'; text: string } => p?.type === 'text')
    .map((p) => p.text)
    .join('\n');
}

function chatRecord(body: Record<string, unknown>, authorization: string | null): ChatRecord {
  const messages = (Array.isArray(body.messages) ? body.messages : []) as ChatRecord['messages'];
  const images: ChatRecord['images'] = [];
  messages.forEach((m, messageIndex) => {
    if (!Array.isArray(m.content)) return;
    for (const part of m.content as { type?: string; image_url?: { url?: string } }[]) {
      if (part?.type !== 'image_url') continue;
      const url = String(part.image_url?.url ?? '');
      const comma = url.indexOf(',');
      images.push({
        messageIndex,
        prefix: url.startsWith('data:') && comma > 0 ? url.slice(0, comma + 1) : url,
        length: url.length,
      });
    }
  });
  const streamOptions = body.stream_options as { include_usage?: boolean } | undefined;
  return {
    at: now(),
    authorization,
    model: String(body.model),
    stream: body.stream === true,
    includeUsage: streamOptions?.include_usage === true,
    body,
    messages,
    system: messages
      .filter((m) => m.role === 'system' || m.role === 'developer')
      .map((m) => textOf(m.content))
      .join('\n'),
    userTexts: messages.filter((m) => m.role === 'user').map((m) => textOf(m.content)),
    toolNames: (Array.isArray(body.tools) ? (body.tools as { function?: { name?: string } }[]) : [])
      .map((tool) => String(tool.function?.name ?? ''))
      .filter(Boolean),
    toolResults: (messages as { role: string; content: unknown; tool_call_id?: string }[])
      .filter((m) => m.role === 'tool')
      .map((m) => ({ callId: String(m.tool_call_id ?? ''), content: textOf(m.content) })),
    images,
    chunksSent: 0,
    tokens: 0,
    aborted: false,
  };
}

/** The calls with their ids and arguments' JSON. */
function toolCallsOf(answer: FakeToolCallReply): (FakeToolCall & { id: string; arguments: string })[] {
  return answer.toolCalls.map((call) => ({
    id: call.id ?? `call_${crypto.randomUUID().replaceAll('-', '').slice(0, 24)}`,
    name: call.name,
    arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
  }));
}

/**
 * OpenAI's streamed tool calls: per call, a delta with its index, id, type and name (arguments
 * ""), then its arguments in pieces (`{index, function: {arguments}}`), as the `openai` client
 * and agents' stream parser read them.
 */
function toolCallDeltas(calls: { id: string; name: string; arguments: string }[]): Record<string, unknown>[] {
  return calls.flatMap((call, index) => {
    const pieces = call.arguments.match(/[\s\S]{1,12}/g) ?? [];
    return [
      { tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }] },
      ...pieces.map((piece) => ({ tool_calls: [{ index, function: { arguments: piece } }] })),
    ];
  });
}

export function startFakeOpenAI(options: FakeOpenAIOptions = {}): FakeOpenAI {
  let responder: ChatResponder = () => DEFAULT_REPLY;
  const transcripts: ScriptedUtterance[] = [];

  async function chat(req: Request, authorization: string | null): Promise<Response> {
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
    if (!body || typeof body.model !== 'string' || !Array.isArray(body.messages)) {
      return oaiError(400, 'model and messages are required', null, 'messages');
    }
    const record = chatRecord(body, authorization);
    fake.chats.push(record);
    let answer: string | FakeToolCallReply;
    try {
      answer = await responder(record);
    } catch (error) {
      if (!(error instanceof FakeChatFailure)) throw error;
      record.failedWith = error.status;
      return Response.json(
        { error: { message: error.message, type: 'server_error', param: null, code: null } },
        { status: error.status },
      );
    }
    const reply = typeof answer === 'string' ? answer : (answer.content ?? '');
    const toolCalls = typeof answer === 'string' ? [] : toolCallsOf(answer);
    if (toolCalls.length) record.toolCallsSent = toolCalls;
    const words = reply.split(/(?=\s)/).filter(Boolean);
    record.reply = reply;
    record.tokens = words.length;
    const id = `chatcmpl-${crypto.randomUUID()}`;
    const created = Math.floor(Date.now() / 1000);
    const promptTokens = JSON.stringify(record.messages).split(/\s+/).length;
    const usage = {
      prompt_tokens: promptTokens,
      completion_tokens: words.length,
      total_tokens: promptTokens + words.length,
    };
    const { firstTokenDelayMs, tokenIntervalMs } = fake;
    const pause = typeof answer === 'string' ? undefined : answer.pause;
    const wordDelay = (i: number) => (i === 0 ? 0 : tokenIntervalMs) + (pause && i === pause.afterWords ? pause.ms : 0);

    if (!record.stream) {
      await Bun.sleep(firstTokenDelayMs);
      record.firstTokenAt = record.finishedAt = now();
      const message = {
        role: 'assistant',
        content: reply || (toolCalls.length ? null : reply),
        refusal: null,
        ...(toolCalls.length
          ? {
              tool_calls: toolCalls.map((call) => ({
                id: call.id,
                type: 'function',
                function: { name: call.name, arguments: call.arguments },
              })),
            }
          : {}),
      };
      return Response.json({
        id,
        object: 'chat.completion',
        created,
        model: record.model,
        choices: [{ index: 0, message, logprobs: null, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }],
        usage,
      });
    }

    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
      id,
      object: 'chat.completion.chunk',
      created,
      model: record.model,
      choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    });
    const events: { delayMs: number; data: unknown; content?: boolean }[] = [
      { delayMs: firstTokenDelayMs, data: chunk({ role: 'assistant', content: '', refusal: null }) },
      ...words.map((w, i) => ({ delayMs: wordDelay(i), data: chunk({ content: w }), content: true })),
      ...toolCallDeltas(toolCalls).map((delta) => ({ delayMs: tokenIntervalMs, data: chunk(delta) })),
      { delayMs: 0, data: chunk({}, toolCalls.length ? 'tool_calls' : 'stop') },
      ...(record.includeUsage
        ? [
            {
              delayMs: 0,
              data: { id, object: 'chat.completion.chunk', created, model: record.model, choices: [], usage },
            },
          ]
        : []),
      { delayMs: 0, data: '[DONE]' },
    ];
    const abort = () => {
      if (record.aborted || record.finishedAt !== undefined) return;
      record.aborted = true;
      record.abortedAt = now();
    };
    req.signal.addEventListener('abort', abort);
    const encoder = new TextEncoder();
    let next = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(controller) {
        const event = events[next++];
        if (event && event.delayMs > 0) await Bun.sleep(event.delayMs);
        if (record.aborted) return controller.close();
        if (!event) {
          record.finishedAt = now();
          return controller.close();
        }
        if (event.content) {
          record.chunksSent++;
          record.firstTokenAt ??= now();
        }
        controller.enqueue(
          encoder.encode(`data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`),
        );
      },
      cancel: abort,
    });
    return new Response(stream, {
      headers: { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' },
    });
  }

  async function transcribe(req: Request, authorization: string | null): Promise<Response> {
    const form = await req.formData().catch(() => null);
    const file = form?.get('file');
    if (!form || !(file instanceof File)) return oaiError(400, "you must provide a 'file'", null, 'file');
    const model = form.get('model');
    if (typeof model !== 'string') return oaiError(400, "you must provide a 'model'", null, 'model');
    const responseFormat = String(form.get('response_format') ?? 'json');
    if (!['json', 'text', 'verbose_json'].includes(responseFormat))
      return oaiError(
        400,
        `this fake answers json, text or verbose_json, not ${responseFormat}`,
        null,
        'response_format',
      );
    const bytes = await file.bytes();
    let audioSeconds: number | undefined;
    try {
      const pcm = parseWav(bytes);
      audioSeconds = pcm.samples.length / pcm.sampleRate;
    } catch {}
    const said = transcripts.shift() ?? DEFAULT_TRANSCRIPT;
    const language = form.get('language');
    const prompt = form.get('prompt');
    fake.transcriptions.push({
      at: now(),
      authorization,
      model,
      ...(typeof language === 'string' ? { language } : {}),
      ...(typeof prompt === 'string' ? { prompt } : {}),
      responseFormat,
      fileName: file.name,
      fileType: file.type,
      audioSeconds,
      text: said.transcript,
    });
    if (responseFormat === 'text') return new Response(said.transcript, { headers: { 'content-type': 'text/plain' } });
    // A pinned language wins over the scripted one, as it does for Whisper.
    const code = typeof language === 'string' && language ? language : (said.language ?? 'en');
    if (responseFormat === 'verbose_json') {
      const duration = audioSeconds ?? 0;
      const segments = [
        {
          id: 0,
          seek: 0,
          start: 0,
          end: duration,
          text: said.transcript,
          tokens: [],
          temperature: 0,
          avg_logprob: -0.1,
          compression_ratio: 1,
          no_speech_prob: 0.01,
        },
      ];
      return Response.json({
        task: 'transcribe',
        language: LANGUAGE_NAMES[code] ?? code,
        duration,
        text: said.transcript,
        segments,
      });
    }
    // The plugin reads a detected language from `languages[0].code` (the gpt-*-transcribe shape).
    return Response.json({
      text: said.transcript,
      languages: [{ code }],
      usage: { type: 'duration', seconds: Math.ceil(audioSeconds ?? 0) },
    });
  }

  async function speak(req: Request, authorization: string | null): Promise<Response> {
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
    if (!body || typeof body.input !== 'string' || !body.input)
      return oaiError(400, "'input' is required", null, 'input');
    if (typeof body.model !== 'string' || typeof body.voice !== 'string')
      return oaiError(400, "'model' and 'voice' are required", null, 'voice');
    const responseFormat = String(body.response_format ?? 'mp3');
    if (responseFormat !== 'pcm' && responseFormat !== 'wav')
      return oaiError(400, `this fake produces pcm or wav, not ${responseFormat}`, null, 'response_format');
    const speed = typeof body.speed === 'number' ? body.speed : undefined;
    // About 15 characters a second, like unhurried speech.
    const audioSeconds = (0.3 + body.input.length * 0.065) / (speed ?? 1);
    fake.speeches.push({
      at: now(),
      authorization,
      model: body.model,
      voice: body.voice,
      input: body.input,
      responseFormat,
      ...(speed !== undefined ? { speed } : {}),
      ...(typeof body.instructions === 'string' ? { instructions: body.instructions } : {}),
      audioSeconds,
    });
    const pcm = speechLikeAudio(audioSeconds, SPEECH_RATE);
    const bytes = responseFormat === 'wav' ? wavFile(pcm) : new Uint8Array(pcm.samples.buffer as ArrayBuffer);
    return new Response(bytes, { headers: { 'content-type': responseFormat === 'wav' ? 'audio/wav' : 'audio/pcm' } });
  }

  /** POST /v1/embeddings: each input a hashed bag of its words, unit length (`dimensions` long, default 1536). */
  async function embed(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => null)) as Record<string, unknown> | null;
    const input = typeof body?.input === 'string' ? [body.input] : body?.input;
    if (!body || typeof body.model !== 'string' || !Array.isArray(input))
      return oaiError(400, "'model' and 'input' are required", null, 'input');
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
    fake.embeddings.push({ model: body.model, dimensions, input: input.map(String) });
    const data = input.map((text, index) => {
      const vector = new Array<number>(dimensions ?? 1536).fill(0);
      for (const word of String(text)
        .toLowerCase()
        .match(/[\p{L}\p{N}]+/gu) ?? []) {
        const hash = Number(Bun.hash(word) % BigInt(vector.length * 2));
        vector[hash >> 1]! += hash & 1 ? 1 : -1;
      }
      const norm = Math.hypot(...vector) || 1;
      return { object: 'embedding', index, embedding: vector.map((v) => v / norm) };
    });
    return Response.json({ object: 'list', data, model: body.model, usage: { prompt_tokens: 0, total_tokens: 0 } });
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0, // a slow stream must not be cut by the server
    async fetch(req) {
      const { pathname } = new URL(req.url);
      fake.requests.push(`${req.method} ${pathname}`);
      const authorization = req.headers.get('authorization');
      if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`) {
        return oaiError(401, 'Incorrect API key provided.', 'invalid_api_key');
      }
      if (req.method === 'GET' && pathname === '/v1/models') {
        const data = (options.models ?? ['gpt-4o-mini', 'whisper-1', 'tts-1']).map((id) => ({
          id,
          object: 'model',
          created: 0,
          owned_by: 'fake',
        }));
        return Response.json({ object: 'list', data });
      }
      if (req.method === 'POST' && pathname === '/v1/chat/completions') return chat(req, authorization);
      if (req.method === 'POST' && pathname === '/v1/audio/transcriptions') return transcribe(req, authorization);
      if (req.method === 'POST' && pathname === '/v1/audio/speech') return speak(req, authorization);
      if (req.method === 'POST' && pathname === '/v1/embeddings') return embed(req);
      return oaiError(404, `Invalid URL (${req.method} ${pathname})`);
    },
  });

  const fake: FakeOpenAI = {
    url: `http://127.0.0.1:${server.port}/v1`,
    chats: [],
    transcriptions: [],
    speeches: [],
    embeddings: [],
    requests: [],
    firstTokenDelayMs: options.firstTokenDelayMs ?? 0,
    tokenIntervalMs: options.tokenIntervalMs ?? 0,
    respond: (r) => void (responder = r),
    scriptTranscriptions: (...utterances) => void transcripts.push(...utterances),
    stop: () => server.stop(true),
  };
  return fake;
}
