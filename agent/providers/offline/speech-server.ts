// The Python process that keeps Whisper and Piper loaded for a whole job, and speaks with
// espeak-ng's library (speech_server.py describes the wire format). Requests carry ids, so recognition and speech can overlap.
import { type ChildProcessByStdio, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

const SCRIPT = fileURLToPath(new URL('./speech_server.py', import.meta.url));
const READY_TIMEOUT_MS = 120_000; // a cold disk cache on a busy machine
const KEPT_STDERR_CHARS = 8_000;

export interface SpeechServerSettings {
  python: string;
  whisper: { en: string; multilingual: string };
  piper: { model: string; config: string };
  threads: number;
}

export interface Transcription {
  text: string;
  language: string;
  probability: number;
  seconds: number;
  /** How much audio Whisper's encoder took in: the speech and some silence, not always 30 s. */
  windowSeconds: number;
}

/** How a text is spoken: Piper (English), or espeak-ng with one of its voices. */
export type SpeechVoice =
  | { engine: 'piper'; lengthScale: number; pitchFactor: number }
  | { engine: 'espeak-ng'; voice: string; pitch: number; wordsPerMinute: number };

/** A sentence of speech, and when each phoneme is said in it. */
export interface SpokenChunk {
  samples: Int16Array;
  sampleRate: number;
  /** [IPA symbol, length in samples] in order, covering the samples. */
  phonemes: Array<[string, number]>;
}

interface Reply {
  header: Record<string, unknown>;
  payload: Buffer;
}

/** One request's replies, in order; ends at `done`, an error or the process's exit. */
class ReplyQueue {
  private items: Reply[] = [];
  private waiting: ((reply: Reply | Error) => void) | null = null;
  private failure: Error | null = null;

  push(reply: Reply): void {
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = null;
      wake(reply);
    } else this.items.push(reply);
  }

  fail(error: Error): void {
    this.failure = error;
    if (this.waiting) {
      const wake = this.waiting;
      this.waiting = null;
      wake(error);
    }
  }

  async next(): Promise<Reply> {
    const item = this.items.shift();
    if (item) return item;
    if (this.failure) throw this.failure;
    const got = await new Promise<Reply | Error>((resolve) => (this.waiting = resolve));
    if (got instanceof Error) throw got;
    return got;
  }
}

export class SpeechServer {
  private readonly child: ChildProcessByStdio<Writable, Readable, Readable>;
  private readonly pending = new Map<string, ReplyQueue>();
  private nextId = 1;
  private buffered: Buffer = Buffer.alloc(0);
  private current: { header: Record<string, unknown>; size: number } | null = null;
  private stderr = '';
  private exitError: Error | null = null;
  private readonly exited: Promise<void>;
  private readyWaiter: { resolve: (header: Record<string, unknown>) => void; reject: (error: Error) => void } | null =
    null;
  /** Output sample rate of the Piper voice. */
  sampleRate = 0;
  /** Whether the process loaded libespeak-ng: espeak-ng speech then comes timed from it. */
  espeak = false;

  private constructor(settings: SpeechServerSettings) {
    const config = { whisper: settings.whisper, piper: settings.piper, threads: settings.threads };
    this.child = spawn(settings.python, ['-u', SCRIPT, JSON.stringify(config)], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: {
        ...process.env,
        // Offline for sure: nothing may reach the Hub at run time.
        HF_HUB_OFFLINE: '1',
        OMP_NUM_THREADS: String(settings.threads),
        // Idle OpenMP threads sleep instead of spinning: the cores are shared with the LLM.
        OMP_WAIT_POLICY: 'PASSIVE',
      },
    });
    this.child.stdout.on('data', (chunk: Buffer) => this.receive(chunk));
    this.child.stderr.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString()).slice(-KEPT_STDERR_CHARS);
    });
    // Writes after the process died must not crash the job.
    this.child.stdin.on('error', () => {});
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        const error = new Error(
          `the offline speech process exited (${signal ?? code}): ${this.stderr.trim().split('\n').slice(-5).join(' | ')}`,
        );
        this.exitError = error;
        this.readyWaiter?.reject(error);
        for (const queue of this.pending.values()) queue.fail(error);
        this.pending.clear();
        resolve();
      });
      this.child.once('error', (error) => {
        this.exitError = error;
        this.readyWaiter?.reject(error);
        resolve();
      });
    });
  }

  /** Starts the process and resolves once every model is loaded. */
  static async start(settings: SpeechServerSettings): Promise<SpeechServer> {
    const server = new SpeechServer(settings);
    const timer = setTimeout(
      () => server.readyWaiter?.reject(new Error('the offline speech process did not load its models in time')),
      READY_TIMEOUT_MS,
    );
    try {
      const ready = await new Promise<Record<string, unknown>>(
        (resolve, reject) => (server.readyWaiter = { resolve, reject }),
      );
      server.sampleRate = Number(ready.sampleRate);
      server.espeak = ready.espeak === true;
    } catch (error) {
      await server.close();
      throw error;
    } finally {
      clearTimeout(timer);
      server.readyWaiter = null;
    }
    return server;
  }

  private receive(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    for (;;) {
      if (!this.current) {
        const newline = this.buffered.indexOf(10);
        if (newline < 0) return;
        const header = JSON.parse(this.buffered.subarray(0, newline).toString()) as Record<string, unknown>;
        this.buffered = this.buffered.subarray(newline + 1);
        this.current = { header, size: typeof header.bytes === 'number' ? header.bytes : 0 };
      }
      if (this.buffered.length < this.current.size) return;
      const payload = this.buffered.subarray(0, this.current.size);
      this.buffered = this.buffered.subarray(this.current.size);
      const { header } = this.current;
      this.current = null;
      this.dispatch({ header, payload });
    }
  }

  private dispatch(reply: Reply): void {
    const { header } = reply;
    if (header.ready) {
      this.readyWaiter?.resolve(header);
      return;
    }
    const id = String(header.id);
    const queue = this.pending.get(id);
    if (!queue) return; // a request abandoned by its caller
    if (typeof header.error === 'string') {
      this.pending.delete(id);
      queue.fail(new Error(`offline speech: ${header.error}`));
    } else queue.push(reply);
  }

  private send(header: Record<string, unknown>, payload?: Uint8Array): { id: string; queue: ReplyQueue } {
    if (this.exitError) throw this.exitError;
    const id = String(this.nextId++);
    const queue = new ReplyQueue();
    this.pending.set(id, queue);
    const message = { ...header, id, ...(payload ? { bytes: payload.byteLength } : {}) };
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
    if (payload) this.child.stdin.write(payload);
    return { id, queue };
  }

  private abandon(id: string): void {
    if (!this.pending.delete(id) || this.exitError) return;
    this.child.stdin.write(`${JSON.stringify({ op: 'cancel', id: `c${id}`, target: id })}\n`);
  }

  /** Recognises mono s16le audio; `language` null detects it among `allowed`. */
  async transcribe(
    pcm: Int16Array,
    sampleRate: number,
    options: { model: 'en' | 'multilingual'; language: string | null; allowed: readonly string[] },
    signal?: AbortSignal,
  ): Promise<Transcription> {
    const bytes = new Uint8Array(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    const { id, queue } = this.send({ op: 'transcribe', sampleRate, ...options }, bytes);
    const onAbort = () => {
      this.abandon(id);
      queue.fail(new Error('recognition aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const { header } = await queue.next();
      return header as unknown as Transcription;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      this.pending.delete(id);
    }
  }

  /**
   * Speaks: yields mono s16le chunks (Piper: one per sentence at `sampleRate`; espeak-ng: the
   * whole text at its own rate), each with its phonemes and their lengths in samples.
   */
  async *speak(text: string, voice: SpeechVoice, signal?: AbortSignal): AsyncGenerator<SpokenChunk> {
    const { id, queue } = this.send({ op: 'speak', text, ...voice });
    const onAbort = () => {
      this.abandon(id);
      queue.fail(new Error('speech aborted'));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      for (;;) {
        const { header, payload } = await queue.next();
        if (header.done) {
          this.pending.delete(id);
          return;
        }
        // Copied: a Buffer's offset in its pool need not be 2-aligned.
        const samples = new Int16Array(payload.byteLength >> 1);
        new Uint8Array(samples.buffer).set(payload.subarray(0, samples.byteLength));
        yield { samples, sampleRate: Number(header.sampleRate), phonemes: phonemePairs(header.phonemes) };
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      // Left early (the consumer stopped): the rest of the reply is not wanted.
      if (this.pending.has(id)) this.abandon(id);
    }
  }

  /** Ends the process: closing stdin asks it to exit, a kill follows if it lingers. */
  async close(): Promise<void> {
    if (!this.exitError) {
      this.child.stdin.end();
      const timer = setTimeout(() => this.child.kill('SIGKILL'), 2_000);
      await this.exited;
      clearTimeout(timer);
    }
  }
}

function phonemePairs(value: unknown): Array<[string, number]> {
  if (!Array.isArray(value)) return [];
  return value.filter(
    (pair): pair is [string, number] => Array.isArray(pair) && typeof pair[0] === 'string' && Number.isFinite(pair[1]),
  );
}
