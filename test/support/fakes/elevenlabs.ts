// A wire-level fake of ElevenLabs, as @livekit/agents-plugin-elevenlabs 1.9.0 and our cloning
// client (src/voices/elevenlabs.ts) speak it. Point them at `fake.baseUrl` (`http://127.0.0.1:PORT/v1`).
//   POST   /v1/voices/add                                     multipart `name`, `files` → {voice_id}
//   DELETE /v1/voices/{id}                                    → {status: 'ok'}, 404 when unknown
//   GET    /v1/voices                                         premade + cloned voices (plugin's listVoices)
//   WS     /v1/text-to-speech/{voice_id}/multi-stream-input   the plugin's stream(): per context
//          `{text:' ', context_id}` opens it, `{text, context_id, flush?}` adds text, `{context_id,
//          close_context:true}` ends it; the fake answers `{audio, contextId, normalizedAlignment}`
//          per generated chunk, then `{contextId, isFinal:true}` once the context is closed.
//   POST   /v1/text-to-speech/{voice_id}/stream               the plugin's synthesize(): raw audio/pcm
// Text is generated when flushed (or once 120 characters are buffered, ElevenLabs' first chunk
// length); text still unflushed when a context closes is dropped, as an interruption would.
// The audio is real: a voiced, pitched signal, 35 ms per character (letters buzz, spaces and
// punctuation are short silences), at the `output_format` rate, after `firstAudioDelayMs`
// counted from the context's first text. Every request is recorded for assertions.
// biome-ignore-all lint/style/noExcessiveLinesPerFile: a wire fake of ElevenLabs' API: one handler per endpoint the plugin calls, each as the real one answers
import type { ServerWebSocket } from 'bun';

/**
 * Twice a person's pace (~70 ms a character): what the suites test of the agent's speech is its
 * order, its sync and its timing, none of which needs a natural pace, and every wait for the
 * agent to finish speaking (its greeting first) is real time. Halving it took 13 % off the
 * conversation suites' time.
 */
export const MS_PER_CHARACTER = 35;
const AUTO_GENERATE_CHARACTERS = 120;
/** Audio goes out in chunks of at most this much, like the real service's partial generations. */
const CHUNK_MS = 500;

export interface ClonedVoiceRecord {
  voiceId: string;
  name: string;
  description: string | null;
  apiKey: string | null;
  files: { name: string; type: string; bytes: Uint8Array }[];
}

export interface TtsConnectionRecord {
  voiceId: string;
  /** Every query parameter: model_id, output_format, language_code, auto_mode, … */
  params: Record<string, string>;
  apiKey: string | null;
  openedAt: number;
  closedAt?: number;
  /** Every JSON message the client sent, in order. */
  messages: Record<string, unknown>[];
}

export interface TtsContextRecord {
  contextId: string;
  voiceId: string;
  params: Record<string, string>;
  /** Text chunks as they arrived (the opening `' '` excluded). */
  texts: string[];
  /** What was turned into audio. */
  spoken: string;
  /** Text still buffered without a flush when the context closed. */
  dropped: string;
  voiceSettings?: unknown;
  openedAt: number;
  firstAudioAt?: number;
  closedAt?: number;
  finalAt?: number;
  audioBytes: number;
}

export interface HttpSynthesisRecord {
  voiceId: string;
  params: Record<string, string>;
  body: Record<string, unknown>;
}

export interface FakeElevenLabsOptions {
  /** Delay from a context's first text to its first audio (the provider's time to first byte). */
  firstAudioDelayMs?: number;
  /** When set, only this `xi-api-key` is accepted (401 otherwise); by default any non-empty key. */
  apiKey?: string;
}

export interface FakeElevenLabs {
  /** For the plugin's `baseURL` and ELEVENLABS_BASE_URL. */
  baseUrl: string;
  /** Mutable: applies to contexts that have not produced audio yet. */
  firstAudioDelayMs: number;
  /** Mutable: while set, POST /v1/voices/add answers this error instead of cloning. */
  cloneFailure: { status: number; message: string } | null;
  /** Mutable: awaited after a voice is cloned, before the answer (to act "while the provider works"). */
  onClone: ((voice: ClonedVoiceRecord) => Promise<void> | void) | null;
  /** Cloned voices that have not been deleted, by id. */
  voices: Map<string, ClonedVoiceRecord>;
  received: {
    clones: ClonedVoiceRecord[];
    deletions: string[];
    connections: TtsConnectionRecord[];
    contexts: TtsContextRecord[];
    syntheses: HttpSynthesisRecord[];
  };
  /** The context with this id (throws if the fake never saw it). */
  context(contextId: string): TtsContextRecord;
  stop(): Promise<void>;
}

/** Premade voices any account has (a few of them, for GET /v1/voices). */
const PREMADE = [
  { voice_id: '21m00Tcm4TlvDqvHYnJl', name: 'Rachel' },
  { voice_id: 'pNInz6obpgDQGcFmaJgB', name: 'Adam' },
  { voice_id: '9BWtsMINqrJLrRacOk9x', name: 'Aria' },
  { voice_id: 'CwhRBWXzGAHq8TQ4Fs17', name: 'Roger' },
];

interface SocketData {
  connection: TtsConnectionRecord;
  contexts: Map<string, ContextState>;
}

interface ContextState {
  record: TtsContextRecord;
  buffer: string;
  /** Generations run one after another per context; contexts run in parallel. */
  chain: Promise<void>;
  firstTextAt?: number;
  /** Milliseconds of audio already produced, for cumulative alignment times. */
  producedMs: number;
  closing: boolean;
}

function unauthorized(): Response {
  return Response.json({ detail: { status: 'invalid_api_key', message: 'Invalid API key' } }, { status: 401 });
}

function sampleRateOf(outputFormat: string | undefined): number | undefined {
  const match = /^pcm_(\d+)$/.exec(outputFormat ?? 'pcm_22050');
  return match ? Number(match[1]) : undefined;
}

/** A deterministic pitch per voice, so different voices sound (and measure) different. */
function pitchFor(voiceId: string): number {
  let hash = 0;
  for (const ch of voiceId) hash = (hash * 31 + ch.charCodeAt(0)) >>> 0;
  return 100 + (hash % 120);
}

/** MS_PER_CHARACTER of signal per character: voiced for letters and digits, near-silence otherwise. */
export function speechFor(
  text: string,
  sampleRate: number,
  pitchHz = 140,
): { pcm: Int16Array; alignment: { chars: string[]; starts: number[]; durations: number[] } } {
  const perChar = Math.round((sampleRate * MS_PER_CHARACTER) / 1000);
  const chars = [...text];
  const pcm = new Int16Array(perChar * chars.length);
  let phase = 0;
  chars.forEach((ch, index) => {
    const voiced = /[\p{L}\p{N}]/u.test(ch);
    for (let i = 0; i < perChar; i++) {
      const n = index * perChar + i;
      // Pitch drifts a little like intonation; harmonics make it a buzz rather than a whistle.
      const f0 = pitchHz * (1 + 0.08 * Math.sin((2 * Math.PI * n) / (sampleRate * 1.3)));
      phase += (2 * Math.PI * f0) / sampleRate;
      if (!voiced) continue;
      const envelope = Math.sin((Math.PI * i) / perChar) ** 0.5;
      const buzz = Math.sin(phase) + 0.5 * Math.sin(2 * phase) + 0.3 * Math.sin(3 * phase) + 0.2 * Math.sin(4 * phase);
      pcm[n] = Math.round((buzz / 2) * envelope * 0.5 * 32767);
    }
  });
  return {
    pcm,
    alignment: {
      chars,
      starts: chars.map((_, i) => i * MS_PER_CHARACTER),
      durations: chars.map(() => MS_PER_CHARACTER),
    },
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startFakeElevenLabs(options: FakeElevenLabsOptions = {}): Promise<FakeElevenLabs> {
  const received: FakeElevenLabs['received'] = {
    clones: [],
    deletions: [],
    connections: [],
    contexts: [],
    syntheses: [],
  };
  const voices = new Map<string, ClonedVoiceRecord>();
  const sockets = new Set<ServerWebSocket<SocketData>>();

  const keyOf = (req: Request) => req.headers.get('xi-api-key');
  const authorised = (key: string | null) => (options.apiKey === undefined ? Boolean(key) : key === options.apiKey);

  async function addVoice(req: Request): Promise<Response> {
    if (fake.cloneFailure)
      return Response.json(
        { detail: { status: 'clone_failed', message: fake.cloneFailure.message } },
        { status: fake.cloneFailure.status },
      );
    let form: FormData;
    try {
      form = await req.formData();
    } catch {
      return Response.json(
        { detail: [{ loc: ['body'], msg: 'expected multipart/form-data', type: 'value_error' }] },
        { status: 422 },
      );
    }
    const name = form.get('name');
    const files = form.getAll('files').filter((f): f is File => typeof f !== 'string');
    if (typeof name !== 'string' || !name || files.length === 0) {
      return Response.json(
        {
          detail: [
            {
              loc: ['body', typeof name === 'string' && name ? 'files' : 'name'],
              msg: 'Field required',
              type: 'missing',
            },
          ],
        },
        { status: 422 },
      );
    }
    const description = form.get('description');
    const record: ClonedVoiceRecord = {
      voiceId: crypto.randomUUID().replaceAll('-', '').slice(0, 20),
      name,
      description: typeof description === 'string' ? description : null,
      apiKey: keyOf(req),
      files: await Promise.all(
        files.map(async (f) => ({ name: f.name, type: f.type, bytes: new Uint8Array(await f.arrayBuffer()) })),
      ),
    };
    received.clones.push(record);
    voices.set(record.voiceId, record);
    await fake.onClone?.(record);
    return Response.json({ voice_id: record.voiceId, requires_verification: false });
  }

  function synthesizeOverHttp(voiceId: string, url: URL, body: Record<string, unknown>): Response {
    const params = Object.fromEntries(url.searchParams);
    received.syntheses.push({ voiceId, params, body });
    const rate = sampleRateOf(params.output_format);
    if (!rate)
      return Response.json(
        { detail: { status: 'invalid_output_format', message: 'this fake speaks pcm_* only' } },
        { status: 400 },
      );
    const text = typeof body.text === 'string' ? body.text : '';
    const { pcm } = speechFor(text, rate, pitchFor(voiceId));
    return new Response(
      new ReadableStream({
        async start(controller) {
          await sleep(fake.firstAudioDelayMs);
          controller.enqueue(new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength));
          controller.close();
        },
      }),
      { headers: { 'content-type': 'audio/pcm' } },
    );
  }

  function send(ws: ServerWebSocket<SocketData>, message: Record<string, unknown>): void {
    if (ws.readyState === 1) ws.send(JSON.stringify(message));
  }

  /** Turn `text` into audio for one context, after the first-audio delay if nothing was sent yet. */
  async function generate(ws: ServerWebSocket<SocketData>, state: ContextState, text: string): Promise<void> {
    if (!text.trim()) return;
    const record = state.record;
    if (record.firstAudioAt === undefined) {
      const due = (state.firstTextAt ?? Date.now()) + fake.firstAudioDelayMs;
      await sleep(Math.max(0, due - Date.now()));
    }
    const rate = sampleRateOf(record.params.output_format)!;
    const { pcm, alignment } = speechFor(text, rate, pitchFor(record.voiceId));
    const charsPerChunk = Math.max(1, Math.floor(CHUNK_MS / MS_PER_CHARACTER));
    const samplesPerChar = pcm.length / alignment.chars.length;
    for (let first = 0; first < alignment.chars.length; first += charsPerChunk) {
      const last = Math.min(alignment.chars.length, first + charsPerChunk);
      const slice = pcm.subarray(first * samplesPerChar, last * samplesPerChar);
      record.firstAudioAt ??= Date.now();
      record.audioBytes += slice.byteLength;
      send(ws, {
        audio: Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength).toString('base64'),
        contextId: record.contextId,
        isFinal: null,
        // Cumulative within the context, which is how the plugin accumulates word timings.
        normalizedAlignment: {
          chars: alignment.chars.slice(first, last),
          charStartTimesMs: alignment.starts.slice(first, last).map((t) => t + state.producedMs),
          charDurationsMs: alignment.durations.slice(first, last),
        },
      });
    }
    state.producedMs += alignment.chars.length * MS_PER_CHARACTER;
    record.spoken += text;
  }

  function onMessage(ws: ServerWebSocket<SocketData>, raw: string | Buffer): void {
    const { connection, contexts } = ws.data;
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(String(raw));
    } catch {
      send(ws, { error: 'invalid_json', message: 'messages must be JSON' });
      return;
    }
    connection.messages.push(message);
    if (message.close_socket === true) {
      ws.close(1000);
      return;
    }
    const contextId = typeof message.context_id === 'string' ? message.context_id : 'default';
    let state = contexts.get(contextId);
    if (!state) {
      if (message.close_context === true) return;
      const record: TtsContextRecord = {
        contextId,
        voiceId: connection.voiceId,
        params: connection.params,
        texts: [],
        spoken: '',
        dropped: '',
        voiceSettings: message.voice_settings,
        openedAt: Date.now(),
        audioBytes: 0,
      };
      received.contexts.push(record);
      state = { record, buffer: '', chain: Promise.resolve(), producedMs: 0, closing: false };
      contexts.set(contextId, state);
    }
    const current = state;
    if (message.close_context === true) {
      current.closing = true;
      current.record.closedAt = Date.now();
      current.record.dropped = current.buffer;
      current.buffer = '';
      current.chain = current.chain.then(() => {
        current.record.finalAt = Date.now();
        send(ws, { contextId, isFinal: true });
        contexts.delete(contextId);
      });
      return;
    }
    if (typeof message.text !== 'string' || current.closing) return;
    if (message.text !== ' ' || current.record.texts.length > 0) {
      if (message.text) current.record.texts.push(message.text);
      if (message.text.trim()) current.firstTextAt ??= Date.now();
      current.buffer += message.text;
    }
    if (message.flush === true || current.buffer.length >= AUTO_GENERATE_CHARACTERS) {
      const text = current.buffer;
      current.buffer = '';
      current.chain = current.chain.then(() => generate(ws, current, text));
    }
  }

  const server = Bun.serve<SocketData>({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req, srv) {
      const url = new URL(req.url);
      const path = url.pathname;
      if (!authorised(keyOf(req))) return unauthorized();
      const stream = /^\/v1\/text-to-speech\/([^/]+)\/multi-stream-input$/.exec(path);
      if (stream) {
        const params = Object.fromEntries(url.searchParams);
        if (!sampleRateOf(params.output_format)) {
          return Response.json(
            { detail: { status: 'invalid_output_format', message: 'this fake speaks pcm_* only' } },
            { status: 400 },
          );
        }
        const connection: TtsConnectionRecord = {
          voiceId: decodeURIComponent(stream[1]!),
          params,
          apiKey: keyOf(req),
          openedAt: Date.now(),
          messages: [],
        };
        received.connections.push(connection);
        if (srv.upgrade(req, { data: { connection, contexts: new Map() } })) return undefined;
        return new Response('expected a WebSocket upgrade', { status: 426 });
      }
      const httpStream = /^\/v1\/text-to-speech\/([^/]+)\/stream$/.exec(path);
      if (httpStream && req.method === 'POST') {
        return synthesizeOverHttp(
          decodeURIComponent(httpStream[1]!),
          url,
          ((await req.json().catch(() => ({}))) ?? {}) as Record<string, unknown>,
        );
      }
      if (path === '/v1/voices/add' && req.method === 'POST') return addVoice(req);
      if (path === '/v1/voices' && req.method === 'GET') {
        return Response.json({
          voices: [
            ...PREMADE.map((v) => ({ ...v, category: 'premade' })),
            ...[...voices.values()].map((v) => ({ voice_id: v.voiceId, name: v.name, category: 'cloned' })),
          ],
        });
      }
      const voice = /^\/v1\/voices\/([^/]+)$/.exec(path);
      if (voice && req.method === 'DELETE') {
        const id = decodeURIComponent(voice[1]!);
        received.deletions.push(id);
        if (!voices.delete(id))
          return Response.json(
            { detail: { status: 'voice_not_found', message: `A voice with id ${id} was not found.` } },
            { status: 404 },
          );
        return Response.json({ status: 'ok' });
      }
      return Response.json(
        { detail: { status: 'not_found', message: `${req.method} ${path} is not faked` } },
        { status: 404 },
      );
    },
    websocket: {
      open(ws) {
        sockets.add(ws);
      },
      message: onMessage,
      close(ws) {
        sockets.delete(ws);
        ws.data.connection.closedAt = Date.now();
      },
    },
  });

  const fake: FakeElevenLabs = {
    baseUrl: `http://127.0.0.1:${server.port}/v1`,
    firstAudioDelayMs: options.firstAudioDelayMs ?? 0,
    cloneFailure: null,
    onClone: null,
    voices,
    received,
    context(contextId) {
      const found = received.contexts.find((c) => c.contextId === contextId);
      if (!found) throw new Error(`the fake saw no context ${contextId}`);
      return found;
    },
    async stop() {
      for (const ws of sockets) ws.close(1001);
      await server.stop(true);
    },
  };
  return fake;
}
