// A wire-level fake of Deepgram live transcription (WebSocket /v1/listen), as spoken by
// @livekit/agents-plugin-deepgram 1.9.0: query parameters (encoding=linear16, sample_rate,
// language, endpointing, vad_events, interim_results, utterance_end_ms), `Authorization: Token …`,
// binary PCM in, JSON `SpeechStarted` / `Results` / `UtteranceEnd` / `Metadata` out, and the
// `KeepAlive` / `Finalize` / `CloseStream` control messages.
// It has no ASR: it follows the audio's energy (speech = RMS over a threshold for ≥ minSpeechMs),
// finalises after `endpointing` ms of silence, measured in audio time as Deepgram does, and
// answers with the next scripted utterance. nova-3 `language=multi` reports the scripted language
// in `channel.alternatives[0].languages`, which is the only place the plugin reads it from.
import type { ServerWebSocket } from 'bun';
import { pcm16, rms, type ScriptedUtterance } from './speech.ts';

export interface DeepgramUtterance {
  transcript: string;
  /** The language the final reported (the detected one under `multi`, else the query's). */
  language: string;
  /** Seconds into the connection's audio. */
  audioStart: number;
  audioEnd: number;
  /** Wall clock, epoch ms (comparable across processes): when the speech began and ended in the
   * audio as it arrived, and when the final `Results` left. */
  speechStartedAt: number;
  speechEndedAt: number;
  finalSentAt?: number;
}

export interface DeepgramConnection {
  requestId: string;
  query: URLSearchParams;
  /** First value of each query parameter (`language`, `model`, `sample_rate`, …). */
  params: Record<string, string>;
  authorization: string | null;
  openedAt: number;
  closedAt?: number;
  closeCode?: number;
  audioSeconds: number;
  /** Types of the JSON messages the client sent (KeepAlive, Finalize, CloseStream, …). */
  controlMessages: string[];
  sent: { at: number; message: Record<string, unknown> }[];
  utterances: DeepgramUtterance[];
}

export interface FakeDeepgramOptions {
  /** When set, only `Token <apiKey>` is accepted (401 otherwise). */
  apiKey?: string;
  /** Extra latency before each final, modelling the provider's own time. */
  finalDelayMs?: number;
  /** RMS (0…1) above which a 10 ms window counts as voiced. */
  speechThreshold?: number;
  minSpeechMs?: number;
  defaultTranscript?: string;
  /** Deepgram closes a connection that sends neither audio nor KeepAlive for 10 s. */
  idleTimeoutMs?: number;
}

export interface FakeDeepgram {
  /** The plugin's `baseUrl`: it appends `/v1/listen`. */
  url: string;
  connections: DeepgramConnection[];
  /** Every connection's emitted utterances, in order. */
  readonly utterances: DeepgramUtterance[];
  finalDelayMs: number;
  script(...utterances: ScriptedUtterance[]): void;
  /** Drops the scripted utterances nothing was heard for yet. */
  clearScript(): void;
  /** Resolves once `count` finals have been sent. */
  waitForUtterances(count: number, timeoutMs?: number): Promise<DeepgramUtterance[]>;
  stop(): Promise<void>;
}

const WINDOW_MS = 10;
const INTERIM_EVERY_MS = 250;
const DEFAULT_ENDPOINTING_MS = 300;
/**
 * A short endpointing (the plugin's default is 25 ms) splits one spoken sentence into several
 * finals at its pauses. The scripted transcript goes with the first of them; the segments
 * that follow within this gap belong to the same utterance and come back empty.
 */
const UTTERANCE_GAP_MS = 700;

const now = () => performance.timeOrigin + performance.now();

interface Socket {
  record: DeepgramConnection;
  listener?: Listener;
}

/** What all of a fake's connections share. */
interface Shared {
  queue: ScriptedUtterance[];
  defaultUtterance: ScriptedUtterance;
  threshold: number;
  minSpeechMs: number;
  idleTimeoutMs: number;
  finalDelayMs(): number;
}

interface Segment {
  startPos: number;
  startedAt: number;
  lastVoicedEnd: number;
  silenceMs: number;
  endedAt: number;
  interims: number;
  /** Starts within UTTERANCE_GAP_MS of the previous segment: the same utterance, already transcribed. */
  continuing: boolean;
}

// One listening connection: the energy follower and what it sends.
class Listener {
  rate: number;
  win: number; // samples in a 10 ms analysis window
  channels: number;
  endpointingMs: number;
  speechFinal: boolean;
  pos = 0; // samples (per channel) analysed so far
  carry = new Int16Array(0);
  candidate: { pos: number; at: number; voicedMs: number; gapMs: number } | null = null;
  segment: Segment | null = null;
  /** Audio position where the last segment's speech ended. */
  lastSpeechEnd: number | undefined;
  outbox = Promise.resolve();
  closed = false;
  idle: ReturnType<typeof setTimeout> | undefined;

  constructor(
    readonly ws: ServerWebSocket<Socket>,
    readonly record: DeepgramConnection,
    readonly shared: Shared,
  ) {
    const p = record.params;
    this.rate = Number(p.sample_rate);
    this.win = Math.round((this.rate * WINDOW_MS) / 1000);
    this.channels = Number(p.channels ?? 1);
    // `endpointing=false` turns endpoint detection off: finals then come after
    // utterance_end_ms of silence, without speech_final.
    this.speechFinal = p.endpointing !== 'false';
    this.endpointingMs = this.speechFinal
      ? Number(p.endpointing ?? DEFAULT_ENDPOINTING_MS)
      : Number(p.utterance_end_ms ?? DEFAULT_ENDPOINTING_MS);
    this.touch();
  }

  touch() {
    clearTimeout(this.idle);
    this.idle = setTimeout(() => this.ws.close(1011, 'NET-0001: no audio received'), this.shared.idleTimeoutMs);
  }

  send(message: Record<string, unknown>, delayMs = 0, utterance?: DeepgramUtterance) {
    this.outbox = this.outbox.then(async () => {
      if (delayMs > 0) await Bun.sleep(delayMs);
      if (this.closed) return;
      const at = now();
      if (utterance) utterance.finalSentAt = at;
      this.ws.send(JSON.stringify(message));
      this.record.sent.push({ at, message });
    });
  }

  audio(bytes: Uint8Array) {
    this.touch();
    const arrived = now();
    let samples = pcm16(bytes);
    if (this.channels > 1) samples = samples.filter((_, i) => i % this.channels === 0);
    this.record.audioSeconds += samples.length / this.rate;
    const all = new Int16Array(this.carry.length + samples.length);
    all.set(this.carry);
    all.set(samples, this.carry.length);
    const end = this.pos + all.length; // audio position of the last sample that arrived
    let i = 0;
    for (; i + this.win <= all.length; i += this.win) {
      const at = arrived - ((end - (this.pos + i)) / this.rate) * 1000; // wall time of this window
      this.window(rms(all.subarray(i, i + this.win)) >= this.shared.threshold, this.pos + i, at);
    }
    this.carry = all.slice(i);
    this.pos += i;
  }

  window(voiced: boolean, pos: number, at: number) {
    const seg = this.segment;
    if (!seg) {
      if (voiced) {
        this.candidate ??= { pos, at, voicedMs: 0, gapMs: 0 };
        this.candidate.voicedMs += WINDOW_MS;
        this.candidate.gapMs = 0;
        if (this.candidate.voicedMs >= this.shared.minSpeechMs) this.begin(this.candidate, pos);
      } else if (this.candidate && (this.candidate.gapMs += WINDOW_MS) >= this.shared.minSpeechMs) {
        this.candidate = null;
      }
      return;
    }
    const windowEnd = pos + this.win;
    if (voiced) {
      seg.lastVoicedEnd = windowEnd;
      seg.silenceMs = 0;
    } else {
      if (seg.silenceMs === 0) seg.endedAt = at;
      seg.silenceMs += WINDOW_MS;
      if (seg.silenceMs >= this.endpointingMs) return this.finish({ speechFinal: this.speechFinal });
    }
    if (
      !seg.continuing &&
      this.record.params.interim_results === 'true' &&
      ((windowEnd - seg.startPos) / this.rate) * 1000 >= (seg.interims + 1) * INTERIM_EVERY_MS
    ) {
      seg.interims++;
      const words = (this.shared.queue[0] ?? this.shared.defaultUtterance).transcript.split(/\s+/);
      const heard = words.slice(0, Math.min(seg.interims, Math.max(1, words.length - 1))).join(' ');
      this.send(
        this.results(heard, this.shared.queue[0] ?? this.shared.defaultUtterance, seg.startPos, windowEnd, {
          is_final: false,
          speech_final: false,
        }),
      );
    }
  }

  begin(candidate: NonNullable<Listener['candidate']>, pos: number) {
    this.candidate = null;
    const continuing =
      this.lastSpeechEnd !== undefined && ((candidate.pos - this.lastSpeechEnd) / this.rate) * 1000 < UTTERANCE_GAP_MS;
    this.segment = {
      startPos: candidate.pos,
      startedAt: candidate.at,
      lastVoicedEnd: pos,
      silenceMs: 0,
      endedAt: 0,
      interims: 0,
      continuing,
    };
    if (this.record.params.vad_events === 'true') {
      this.send({ type: 'SpeechStarted', channel: [0], timestamp: candidate.pos / this.rate });
    }
  }

  /** The final for the current speech, carrying the next scripted utterance. */
  finish(flags: { speechFinal: boolean; fromFinalize?: boolean }) {
    const seg = this.segment;
    if (!seg) return;
    this.segment = null;
    this.lastSpeechEnd = seg.lastVoicedEnd;
    if (seg.continuing) {
      this.send(
        this.results('', this.shared.defaultUtterance, seg.startPos, seg.lastVoicedEnd, {
          is_final: true,
          speech_final: flags.speechFinal,
        }),
      );
      return;
    }
    const said = this.shared.queue.shift() ?? this.shared.defaultUtterance;
    const multi = this.record.params.language === 'multi';
    const utterance: DeepgramUtterance = {
      transcript: said.transcript,
      language: multi ? (said.language ?? 'en') : (this.record.params.language ?? 'en'),
      audioStart: seg.startPos / this.rate,
      audioEnd: seg.lastVoicedEnd / this.rate,
      speechStartedAt: seg.startedAt,
      speechEndedAt: seg.silenceMs > 0 ? seg.endedAt : now(),
    };
    this.record.utterances.push(utterance);
    this.send(
      this.results(said.transcript, said, seg.startPos, seg.lastVoicedEnd, {
        is_final: true,
        speech_final: flags.speechFinal,
        ...(flags.fromFinalize ? { from_finalize: true } : {}),
      }),
      this.shared.finalDelayMs(),
      utterance,
    );
    if (this.record.params.utterance_end_ms) {
      this.send({ type: 'UtteranceEnd', channel: [0, 1], last_word_end: seg.lastVoicedEnd / this.rate });
    }
  }

  results(transcript: string, said: ScriptedUtterance, fromPos: number, toPos: number, flags: Record<string, boolean>) {
    const start = fromPos / this.rate;
    const duration = (toPos - fromPos) / this.rate;
    const multi = this.record.params.language === 'multi';
    const language = said.language ?? 'en';
    const tokens = transcript ? transcript.split(/\s+/) : [];
    const words = tokens.map((w, i) => ({
      word: w.toLowerCase().replace(/[^\p{L}\p{N}']/gu, ''),
      start: start + (duration * i) / tokens.length,
      end: start + (duration * (i + 1)) / tokens.length,
      confidence: 0.98,
      punctuated_word: w,
      ...(multi ? { language } : {}),
    }));
    return {
      type: 'Results',
      channel_index: [0, 1],
      duration,
      start,
      ...flags,
      channel: { alternatives: [{ transcript, confidence: 0.98, words, ...(multi ? { languages: [language] } : {}) }] },
      metadata: {
        request_id: this.record.requestId,
        model_info: { name: this.record.params.model, version: 'fake', arch: 'fake' },
        model_uuid: 'fake',
      },
    };
  }

  control(text: string) {
    let type = 'unparseable';
    try {
      type = String((JSON.parse(text) as { type?: unknown }).type);
    } catch {}
    this.record.controlMessages.push(type);
    if (type === 'KeepAlive') this.touch();
    else if (type === 'Finalize') {
      if (this.segment) this.finish({ speechFinal: false, fromFinalize: true });
      else
        this.send(
          this.results('', this.shared.defaultUtterance, this.pos, this.pos, {
            is_final: true,
            speech_final: false,
            from_finalize: true,
          }),
        );
    } else if (type === 'CloseStream') {
      // Deepgram flushes what it heard, reports the stream's metadata, then closes.
      this.finish({ speechFinal: false });
      this.send({
        type: 'Metadata',
        request_id: this.record.requestId,
        duration: this.record.audioSeconds,
        channels: this.channels,
      });
      this.outbox = this.outbox.then(() => this.ws.close(1000));
    }
  }
}

export function startFakeDeepgram(options: FakeDeepgramOptions = {}): FakeDeepgram {
  const connections: DeepgramConnection[] = [];
  const queue: ScriptedUtterance[] = [];
  const shared: Shared = {
    queue,
    defaultUtterance: { transcript: options.defaultTranscript ?? 'Hello, how are you today?', language: 'en' },
    threshold: options.speechThreshold ?? 0.01,
    minSpeechMs: options.minSpeechMs ?? 100,
    idleTimeoutMs: options.idleTimeoutMs ?? 10_000,
    finalDelayMs: () => fake.finalDelayMs,
  };

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(req, srv) {
      const url = new URL(req.url);
      if (url.pathname !== '/v1/listen') return new Response('not found', { status: 404 });
      const authorization = req.headers.get('authorization');
      if (options.apiKey !== undefined && authorization !== `Token ${options.apiKey}`) {
        return Response.json({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' }, { status: 401 });
      }
      const params = Object.fromEntries(url.searchParams);
      if (params.encoding !== 'linear16' || !(Number(params.sample_rate) > 0)) {
        return Response.json(
          { err_code: 'Bad Request', err_msg: 'this fake understands encoding=linear16 with a sample_rate only' },
          { status: 400 },
        );
      }
      const requestId = crypto.randomUUID();
      const record: DeepgramConnection = {
        requestId,
        query: url.searchParams,
        params,
        authorization,
        openedAt: now(),
        audioSeconds: 0,
        controlMessages: [],
        sent: [],
        utterances: [],
      };
      connections.push(record);
      if (srv.upgrade(req, { data: { record }, headers: { 'dg-request-id': requestId } })) return undefined;
      return new Response('expected a WebSocket upgrade', { status: 426 });
    },
    websocket: {
      data: {} as Socket,
      open(ws) {
        ws.data.listener = new Listener(ws, ws.data.record, shared);
      },
      message(ws, message) {
        if (typeof message === 'string') ws.data.listener?.control(message);
        else ws.data.listener?.audio(message);
      },
      close(ws, code) {
        const listener = ws.data.listener;
        if (!listener) return;
        listener.closed = true;
        clearTimeout(listener.idle);
        listener.record.closedAt = now();
        listener.record.closeCode = code;
      },
    },
  });

  const fake: FakeDeepgram = {
    url: `ws://127.0.0.1:${server.port}`,
    connections,
    get utterances() {
      return connections.flatMap((c) => c.utterances);
    },
    finalDelayMs: options.finalDelayMs ?? 0,
    script: (...utterances) => void queue.push(...utterances),
    clearScript: () => void queue.splice(0),
    async waitForUtterances(count, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const sent = fake.utterances.filter((u) => u.finalSentAt !== undefined);
        if (sent.length >= count) return sent;
        if (Date.now() > deadline)
          throw new Error(`fake Deepgram sent ${sent.length} of ${count} finals in ${timeoutMs} ms`);
        await Bun.sleep(20);
      }
    },
    stop: () => server.stop(true),
  };
  return fake;
}
