// Whisper started before the turn's silence is confirmed. agents' stt.StreamAdapter asks for
// an utterance's words once the VAD has counted 250 ms of silence after it (its
// minSilenceDuration), and Whisper then takes ~0.2 s on two cores: the reply waits for both.
// Silero's speech probability falls from ~1 to under 0.1 within ~0.15 s of the voice's end,
// while its silence count starts only below 0.35 and lags a window: the VAD ends an utterance
// ~0.35 s after the voice. Here the words are asked for as soon as the probability has been
// low for QUIET_WINDOWS windows (~0.15 s after the voice). If the visitor stays silent until
// the VAD ends the utterance, that answer is the utterance's, ready ~0.2 s sooner; if they speak
// again first (the VAD's silence count starts over), it is aborted and forgotten, and the
// utterance goes on. Only for the offline Whisper: a cloud recogniser would bill every pause.
import {
  type APIConnectOptions,
  type AudioBuffer,
  stt,
  type VAD,
  type VADEvent,
  VADEventType,
  type VADStream,
} from '@livekit/agents';
import type { AudioFrame } from '@livekit/rtc-node';

/** Below this speech probability a VAD window (32 ms) is quiet. */
export const QUIET_PROBABILITY = 0.15;
/**
 * Quiet windows in a row before the words are asked for: one could be a stop consonant, and
 * every shorter pause inside a sentence starts a Whisper run that is thrown away.
 */
export const QUIET_WINDOWS = 2;

export class EarlyRecognition extends stt.STT {
  label: string;
  readonly #recogniser: stt.STT;
  readonly #vad: VAD;

  constructor(recogniser: stt.STT, vad: VAD) {
    super({ streaming: true, interimResults: false, alignedTranscript: false });
    this.#recogniser = recogniser;
    this.#vad = vad;
    this.label = `EarlyRecognition<${recogniser.label}>`;
    recogniser.on('metrics_collected', (metrics) => this.emit('metrics_collected', metrics));
    recogniser.on('error', (error) => this.emit('error', error));
  }

  override get model(): string {
    return this.#recogniser.model;
  }

  override get provider(): string {
    return this.#recogniser.provider;
  }

  protected _recognize(buffer: AudioBuffer, abortSignal?: AbortSignal): Promise<stt.SpeechEvent> {
    return this.#recogniser.recognize(buffer, abortSignal);
  }

  stream(options?: { connOptions?: APIConnectOptions }): stt.SpeechStream {
    return new EarlyRecognitionStream(this, this.#recogniser, this.#vad.stream(), options?.connOptions);
  }
}

/** A recognition started in a pause: valid while the pause goes on. */
interface EarlyAnswer {
  answer: Promise<stt.SpeechEvent>;
  stop: AbortController;
  /** The VAD's silence count when last seen: it only grows while the pause lasts. */
  silenceMs: number;
}

class EarlyRecognitionStream extends stt.SpeechStream {
  label: string;
  readonly #recogniser: stt.STT;
  readonly #vadStream: VADStream;

  constructor(owner: stt.STT, recogniser: stt.STT, vadStream: VADStream, connOptions?: APIConnectOptions) {
    super(owner, undefined, connOptions);
    this.#recogniser = recogniser;
    this.#vadStream = vadStream;
    this.label = `EarlyRecognitionStream<${recogniser.label}>`;
  }

  override close(): void {
    super.close();
    this.#vadStream.close();
  }

  protected override async monitorMetrics(): Promise<void> {
    // the recogniser reports its own
  }

  protected async run(): Promise<void> {
    await Promise.all([this.#forwardAudio(), this.#recogniseUtterances()]);
  }

  async #forwardAudio(): Promise<void> {
    for await (const input of this.input) {
      if (input === stt.SpeechStream.FLUSH_SENTINEL) this.#vadStream.flush();
      else this.#vadStream.pushFrame(input);
    }
    try {
      this.#vadStream.endInput();
    } catch {
      // closed under us (a handover closes the stream while audio is still forwarded)
    }
  }

  async #recogniseUtterances(): Promise<void> {
    /** The utterance so far: the VAD's buffer at its start, then each window it hears. */
    let heard: AudioFrame[] = [];
    let early: EarlyAnswer | null = null;
    let quietWindows = 0;
    const forgetEarly = () => {
      early?.stop.abort();
      early = null;
    };
    try {
      for await (const event of this.#vadStream) {
        switch (event.type) {
          case VADEventType.START_OF_SPEECH:
            forgetEarly();
            quietWindows = 0;
            heard = [...event.frames];
            this.output.put({ type: stt.SpeechEventType.START_OF_SPEECH });
            break;
          case VADEventType.INFERENCE_DONE:
            if (!event.speaking) break;
            heard.push(...event.frames);
            quietWindows = event.probability < QUIET_PROBABILITY ? quietWindows + 1 : 0;
            early = this.#followPause(event, early, heard, quietWindows >= QUIET_WINDOWS);
            break;
          case VADEventType.END_OF_SPEECH: {
            const speechEndTime = Date.now() - event.silenceDuration - event.inferenceDuration;
            this.output.put({ type: stt.SpeechEventType.END_OF_SPEECH, speechEndTime });
            const answered: EarlyAnswer | null = early;
            early = null;
            heard = [];
            await this.#putWords(event, answered, speechEndTime);
            break;
          }
        }
      }
    } finally {
      forgetEarly();
    }
  }

  /**
   * Starts, keeps or drops the recognition of a pause: it lasts while the VAD's silence count
   * grows (the count the VAD ends the utterance on).
   */
  #followPause(event: VADEvent, early: EarlyAnswer | null, heard: AudioFrame[], quiet: boolean): EarlyAnswer | null {
    const silenceMs = event.rawAccumulatedSilence;
    if (early && silenceMs >= early.silenceMs) {
      early.silenceMs = silenceMs;
      return early;
    }
    if (early) early.stop.abort(); // the visitor spoke again: that pause was not the end
    if (!quiet) return null;
    const stop = new AbortController();
    const answer = this.#recogniser.recognize([...heard], stop.signal);
    answer.catch(() => undefined); // an aborted one is never awaited
    return { answer, stop, silenceMs };
  }

  async #putWords(event: VADEvent, early: EarlyAnswer | null, speechEndTime: number): Promise<void> {
    let words: stt.SpeechEvent | undefined;
    try {
      words = early
        ? await early.answer.catch(() => this.#recogniser.recognize(event.frames, this.abortSignal))
        : await this.#recogniser.recognize(event.frames, this.abortSignal);
    } catch {
      return; // the recogniser emitted its error; the next utterance is asked for again
    }
    if (!words.alternatives?.[0]?.text) return;
    this.output.put({ ...words, speechEndTime: words.speechEndTime ?? speechEndTime });
  }
}
