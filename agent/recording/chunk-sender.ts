// Ships a part's chunks to the control plane in order (contract/recordings.ts), one request
// at a time, beside the avatar's loop and never in it. A 5xx or a network error is tried
// again a few times with backoff; a 4xx is final (the control plane refuses this part: the
// session is not recorded, or the token is not this job's): nothing more is sent. A chunk
// that still fails after its retries ends the part there, since a later chunk after a hole
// would not join into a file: `done` then counts the chunks that arrived.
import {
  RECORDING_CHUNK_MAX_BYTES,
  RECORDING_PART_STARTED_HEADER,
  type RecordingPartDone,
  recordingChunkPath,
  recordingPartDonePath,
} from '../../src/contract/index.ts';
import type { AgentLogger } from '../logging.ts';

export interface ChunkSenderOptions {
  sessionId: string;
  /** The job's id (contract RECORDING_PART_PATTERN). */
  part: string;
  /** The dispatch's `report_url`: the chunks go to its origin. */
  reportUrl: string;
  reportToken: string;
  logger: Pick<AgentLogger, 'warn' | 'info'>;
  /** Waits before each retry; the default gives the control plane about 7 s to come back. */
  retryDelaysMs?: readonly number[];
  /** One request's limit. */
  requestTimeoutMs?: number;
}

const DEFAULT_RETRY_DELAYS_MS = [250, 1_000, 2_000, 4_000];
const DEFAULT_REQUEST_TIMEOUT_MS = 10_000;

type Outcome = 'accepted' | 'refused' | 'failed';

export class ChunkSender {
  readonly #options: ChunkSenderOptions;
  readonly #retryDelaysMs: readonly number[];
  /** Chunks accepted, which is also the next chunk's number. */
  #accepted = 0;
  /** The part's duration as of the last chunk accepted. */
  #acceptedDurationMs = 0;
  #queued = 0;
  /** Set once nothing more may be sent: a refusal, or a chunk lost after its retries. */
  #ended: 'refused' | 'failed' | undefined;
  #chain: Promise<void> = Promise.resolve();
  /** When the part's first tick was recorded (epoch ms), sent with each chunk. */
  #startedAtMs: number | undefined;

  constructor(options: ChunkSenderOptions) {
    this.#options = options;
    this.#retryDelaysMs = options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
  }

  /** Whether sending has ended early: the recording may as well stop. */
  get ended(): boolean {
    return this.#ended !== undefined;
  }

  get accepted(): number {
    return this.#accepted;
  }

  /** The part's recording began now: its chunks say so (contract RECORDING_PART_STARTED_HEADER). */
  markStarted(atMs = Date.now()): void {
    this.#startedAtMs ??= atMs;
  }

  /** Queues a chunk; `durationMs` is how much of the part is recorded once it is in. */
  send(chunk: Uint8Array, durationMs: number): void {
    if (this.#ended) return;
    if (chunk.length > RECORDING_CHUNK_MAX_BYTES)
      throw new Error(`a recording chunk of ${chunk.length} bytes is too large`);
    this.#queued++;
    this.#chain = this.#chain.then(async () => {
      this.#queued--;
      if (this.#ended) return;
      const n = this.#accepted;
      const path = recordingChunkPath(this.#options.sessionId, this.#options.part, n);
      const outcome = await this.#request('PUT', path, chunk, 'application/octet-stream');
      if (outcome === 'accepted') {
        this.#accepted++;
        this.#acceptedDurationMs = durationMs;
      } else this.#end(outcome, `chunk ${n}`);
    });
  }

  /**
   * Waits for the chunks queued (at most `waitMs`), then says the part is complete. Chunks
   * still unsent when the wait runs out are given up: `done` counts those that arrived.
   * Returns what `done` said, or null when it was not sent (refused, or the wait ran out).
   */
  async finish(durationMs: number, waitMs: number): Promise<RecordingPartDone | null> {
    const deadline = performance.now() + waitMs;
    const drained = await Promise.race([this.#chain.then(() => true), Bun.sleep(waitMs).then(() => false)]);
    if (!drained) this.#end('failed', `the last chunks (${this.#queued} still queued)`);
    if (this.#ended === 'refused') return null;
    const done: RecordingPartDone = {
      chunks: this.#accepted,
      duration_ms: Math.round(this.#ended ? this.#acceptedDurationMs : durationMs),
    };
    const body = new TextEncoder().encode(JSON.stringify(done));
    const path = recordingPartDonePath(this.#options.sessionId, this.#options.part);
    const left = Math.max(0, deadline - performance.now());
    const outcome = await Promise.race([
      this.#request('POST', path, body, 'application/json', deadline),
      Bun.sleep(left + 1_000).then((): Outcome => 'failed'),
    ]);
    if (outcome !== 'accepted') {
      this.#options.logger.warn({ ...done, outcome }, "the recording's part could not be closed");
      return null;
    }
    return done;
  }

  #end(outcome: 'refused' | 'failed', what: string): void {
    if (this.#ended) return;
    this.#ended = outcome;
    this.#options.logger.warn(
      { part: this.#options.part, chunks_accepted: this.#accepted, outcome },
      outcome === 'refused'
        ? `the control plane refused ${what} of the recording; recording stops`
        : `${what} of the recording could not be sent; the part ends before it`,
    );
  }

  /** One request with its retries; a deadline stops retrying (the job is leaving). */
  async #request(
    method: 'PUT' | 'POST',
    path: string,
    body: Uint8Array,
    contentType: string,
    deadline = Number.POSITIVE_INFINITY,
  ): Promise<Outcome> {
    const url = new URL(path, this.#options.reportUrl);
    for (let attempt = 0; ; attempt++) {
      let status: number | undefined;
      try {
        const response = await fetch(url, {
          method,
          body: body as Uint8Array<ArrayBuffer>,
          headers: {
            authorization: `Bearer ${this.#options.reportToken}`,
            'content-type': contentType,
            // Internal routes refuse a body without one; fetch would send a Uint8Array with it anyway.
            'content-length': String(body.length),
            ...(this.#startedAtMs !== undefined && { [RECORDING_PART_STARTED_HEADER]: String(this.#startedAtMs) }),
          },
          signal: AbortSignal.timeout(this.#options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS),
        });
        status = response.status;
        await response.arrayBuffer().catch(() => undefined);
      } catch {
        // A network error or a timeout: retried like a 5xx.
      }
      if (status !== undefined && status >= 200 && status < 300) return 'accepted';
      if (status !== undefined && status >= 400 && status < 500) return 'refused';
      const delay = this.#retryDelaysMs[attempt];
      if (delay === undefined || performance.now() + delay > deadline) return 'failed';
      await Bun.sleep(delay);
    }
  }
}
