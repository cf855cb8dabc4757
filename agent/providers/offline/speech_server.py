"""Long-running helper of the offline voice models: Whisper (faster-whisper), Piper and espeak-ng.

Started by agent/providers/offline/speech-server.ts with the models venv's python. Loading the
models takes seconds, recognising or speaking one utterance a fraction of one, so one
process keeps them loaded for a whole job.

Protocol (stdin and stdout, one message = a JSON header line, then `bytes` raw bytes):
  -> {"id", "op": "transcribe", "model": "en"|"multilingual", "language": "es"|null,
      "allowed": ["en", ...], "sampleRate": 48000, "bytes": N} + N bytes of mono s16le
  <- {"id", "text", "language", "probability", "seconds", "windowSeconds"}
  -> {"id", "op": "speak", "text", "lengthScale", "pitchFactor"}  (Piper), or
     {"id", "op": "speak", "engine": "espeak-ng", "text", "voice", "pitch", "wordsPerMinute"}
  <- {"id", "sampleRate", "phonemes": [[ipa, samples], ...], "bytes": N} + N bytes of mono s16le
     (one per sentence; the phonemes cover its samples, [] when unknown), then {"id", "done": true}
  -> {"id", "op": "cancel", "target": id}  (drops a request that has not started yet)
  <- {"id", "error": "..."} when a request fails
At start it prints {"ready": true, "espeak": bool, ...} once every model is loaded (espeak: whether
libespeak-ng loaded; without it the caller runs the espeak-ng command, untimed).

Recognition and speech run on two threads (both libraries release the GIL), so a reply
can be spoken while the next utterance is recognised. The process exits when its stdin
closes or its parent dies, so it never outlives the job that started it.
"""

import functools
import json
import os
import queue
import sys
import threading
import time

import numpy as np

SAMPLE_RATE_IN = 16000
# Whisper hallucinates long loops on noise: bound the decode by the audio's length.
TOKENS_PER_SECOND = 8
MIN_NEW_TOKENS = 24
# Whisper's encoder costs the same for any audio in its 30 s window: a 2 s question paid ~450 ms
# (tiny.en) and ~1 s (base) on two cores. A 15 s window is ~2.5x faster with the same word error
# rate on the evaluation's turns (docs/benchmarks.md), if Whisper also predicts timestamps and the
# window keeps seconds of silence after the speech: without either it repeated short questions
# to fill the window ("Are you a teacher? Are you"); 10 s windows misheard more.
MIN_WINDOW_SECONDS = 15
SILENCE_AFTER_SPEECH_SECONDS = 5
# agents' VAD hands over each turn with the 500 ms it buffered before the voice began. When the
# visitor's client sends nothing during silence (Opus DTX), that buffer still holds the end of
# the previous turn: ~0.1-0.25 s of a word, then silence. Whisper then heard "world. What is
# the tallest mountain in the world?" (3 of 34 evaluation turns) or garbled the question.
VAD_PREFIX_SECONDS = 0.5
STALE_GAP_SECONDS = 0.2

out_lock = threading.Lock()
cancelled = set()
waiting = set()
cancelled_lock = threading.Lock()


def send(header, payload=b""):
    if payload:
        header["bytes"] = len(payload)
    line = (json.dumps(header) + "\n").encode()
    with out_lock:
        sys.stdout.buffer.write(line)
        if payload:
            sys.stdout.buffer.write(payload)
        sys.stdout.buffer.flush()


def to_16k(audio, rate):
    """Whisper hears 16 kHz. Integer ratios (48k, 32k) average blocks, a cheap low-pass."""
    if rate == SAMPLE_RATE_IN or len(audio) == 0:
        return audio
    if rate % SAMPLE_RATE_IN == 0:
        factor = rate // SAMPLE_RATE_IN
        usable = len(audio) - len(audio) % factor
        return audio[:usable].reshape(-1, factor).mean(axis=1)
    count = int(len(audio) * SAMPLE_RATE_IN / rate)
    return np.interp(np.arange(count) * (rate / SAMPLE_RATE_IN), np.arange(len(audio)), audio).astype(np.float32)


def take_cancelled(request_id):
    with cancelled_lock:
        if request_id in cancelled:
            cancelled.discard(request_id)
            return True
    return False


def queued(request_id):
    with cancelled_lock:
        waiting.add(request_id)


def finished(request_id):
    with cancelled_lock:
        waiting.discard(request_id)
        cancelled.discard(request_id)


def cancel(request_id):
    # Only requests still waiting or running: a late cancel must not linger in the set.
    with cancelled_lock:
        if request_id in waiting:
            cancelled.add(request_id)


def drop_stale_lead(audio):
    """Cuts sound in the VAD's prefix that a silence of STALE_GAP_SECONDS separates from the turn."""
    hop = SAMPLE_RATE_IN // 100
    count = len(audio) // hop
    if count == 0:
        return audio
    levels = np.sqrt(np.mean(audio[: count * hop].reshape(count, hop) ** 2, axis=1))
    # Quiet relative to this turn's voice, or digital silence from a decoder in DTX.
    quiet = levels <= max(0.002, 0.05 * float(np.percentile(levels, 90)))
    prefix = min(count, int(VAD_PREFIX_SECONDS * 100))
    gap = int(STALE_GAP_SECONDS * 100)
    cut = 0
    run = 0
    heard_sound = False
    for index in range(prefix):
        if quiet[index]:
            run += 1
            if heard_sound and run >= gap:
                cut = index + 1
        else:
            if cut:
                break  # the turn's own voice has begun
            heard_sound = True
            run = 0
    # Keep a few quiet frames before the voice, as the VAD's padding meant to.
    return audio[max(0, cut - 5) * hop :] if cut else audio


def window_frames(samples, extractor):
    """Mel frames to encode: the speech and some silence after it, at least MIN_WINDOW_SECONDS."""
    per_second = extractor.sampling_rate // extractor.hop_length
    wanted = max(MIN_WINDOW_SECONDS * per_second, samples // extractor.hop_length + SILENCE_AFTER_SPEECH_SECONDS * per_second)
    return min(extractor.nb_max_frames, wanted)


class Recogniser:
    """Whisper without faster-whisper's 30-second segment loop: a turn is one window."""

    def __init__(self, path, threads):
        from faster_whisper import WhisperModel
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        self.model = WhisperModel(path, device="cpu", compute_type="int8", cpu_threads=threads)
        self.pad_or_trim = pad_or_trim
        self.Tokenizer = Tokenizer

    def transcribe(self, audio, language, allowed):
        model = self.model
        window = model.feature_extractor.n_samples
        if len(audio) > window:
            return self.transcribe_long(audio, language, allowed)
        features = model.feature_extractor(audio)
        frames = window_frames(len(audio), model.feature_extractor)
        encoded = model.encode(self.pad_or_trim(features, frames))
        probability = 1.0
        if not model.model.is_multilingual:
            language = "en"
        elif language is None:
            # Detection restricted to the languages we can answer in: Whisper base often
            # ranks a neighbour (uk -> ru/de/ar) first, but the right one above the others.
            ranked = [(token[2:-2], p) for token, p in model.model.detect_language(encoded)[0]]
            candidates = [(code, p) for code, p in ranked if not allowed or code in allowed]
            language, probability = (candidates or ranked)[0]
        tokenizer = self.Tokenizer(model.hf_tokenizer, model.model.is_multilingual, task="transcribe", language=language)
        prompt = model.get_prompt(tokenizer, [], without_timestamps=False)
        max_new = MIN_NEW_TOKENS + int(TOKENS_PER_SECOND * len(audio) / SAMPLE_RATE_IN)
        result = model.model.generate(
            encoded,
            [prompt],
            beam_size=1,
            max_length=len(prompt) + max_new,
            no_repeat_ngram_size=3,
            suppress_blank=True,
            suppress_tokens=[-1],
            return_no_speech_prob=True,
        )[0]
        text = tokenizer.decode(result.sequences_ids[0]).strip()
        if result.no_speech_prob > 0.8 and len(text) < 4:
            text = ""
        return text, language, float(probability), frames * model.feature_extractor.time_per_frame

    def transcribe_long(self, audio, language, allowed):
        if language is None and self.model.model.is_multilingual:
            _, _, ranked = self.model.detect_language(audio=audio)
            candidates = [(code, p) for code, p in ranked if not allowed or code in allowed]
            language, probability = (candidates or ranked)[0]
        else:
            language, probability = (language or "en"), 1.0
        segments, _ = self.model.transcribe(
            audio, language=language, beam_size=1, without_timestamps=True, condition_on_previous_text=False
        )
        text = "".join(segment.text for segment in segments).strip()
        windows = -(-len(audio) // self.model.feature_extractor.n_samples)
        return text, language, float(probability), windows * self.model.feature_extractor.chunk_length


class Speaker:
    def __init__(self, model_path, config_path, threads):
        import onnxruntime
        from piper import PiperVoice, SynthesisConfig
        from piper.config import PiperConfig

        # Piper's own session spins its threads while idle; on a shared 2-core machine that
        # steals the CPU Whisper and the LLM need. Same model, a polite session, made once:
        # PiperVoice.load makes its own first (1.2 s of CPU a job process spent for nothing).
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        with open(config_path, "r", encoding="utf-8") as config_file:
            config = PiperConfig.from_dict(json.load(config_file))
        session = onnxruntime.InferenceSession(model_path, sess_options=options, providers=["CPUExecutionProvider"])
        self.voice = PiperVoice(config=config, session=session)
        self.SynthesisConfig = SynthesisConfig
        self.sample_rate = self.voice.config.sample_rate

    def speak(self, text, length_scale, pitch_factor):
        """Yields (s16le bytes, phonemes) per sentence; phonemes are [symbol, samples] pairs
        when the model was patched for alignments at install (else an empty list)."""
        # Pitch by resampling: synthesise slower by the pitch factor, then play it back
        # faster by the same factor, so the duration stays what length_scale asked for.
        config = self.SynthesisConfig(length_scale=length_scale * pitch_factor)
        for chunk in self.voice.synthesize(text, syn_config=config, include_alignments=True):
            samples = chunk.audio_float_array.astype(np.float32)
            resampled = abs(pitch_factor - 1.0) > 1e-3 and len(samples) > 1
            if resampled:
                count = max(1, int(round(len(samples) / pitch_factor)))
                samples = np.interp(np.arange(count) * pitch_factor, np.arange(len(samples)), samples)
            phonemes = [
                [alignment.phoneme, int(round(int(alignment.num_samples) / (pitch_factor if resampled else 1.0)))]
                for alignment in (chunk.phoneme_alignments or [])
            ]
            yield (np.clip(samples, -1.0, 1.0) * 32767).astype("<i2").tobytes(), phonemes


class Espeak:
    """espeak-ng as a library (Debian's libespeak-ng1, which the espeak-ng command uses): unlike
    the command, it reports when each phoneme starts (phoneme events, in IPA), which the
    avatar's lips follow. Synchronous mode: espeak_Synth returns once the callback has had
    all the audio. Used from the speech thread only (the library is not thread-safe)."""

    AUDIO_OUTPUT_SYNCHRONOUS = 2
    INITIALIZE_PHONEME_EVENTS = 0x0001
    INITIALIZE_PHONEME_IPA = 0x0002
    EVENT_LIST_TERMINATED = 0
    EVENT_PHONEME = 7
    RATE = 1
    PITCH = 3
    POS_CHARACTER = 1
    CHARS_UTF8 = 1

    def __init__(self):
        import ctypes

        class Event(ctypes.Structure):
            _fields_ = [
                ("type", ctypes.c_int), ("unique_identifier", ctypes.c_uint), ("text_position", ctypes.c_int),
                ("length", ctypes.c_int), ("audio_position", ctypes.c_int), ("sample", ctypes.c_int),
                ("user_data", ctypes.c_void_p), ("id", ctypes.c_char * 8),
            ]

        self.ctypes = ctypes
        self.lib = ctypes.CDLL("libespeak-ng.so.1")
        self.sample_rate = self.lib.espeak_Initialize(
            self.AUDIO_OUTPUT_SYNCHRONOUS, 0, None, self.INITIALIZE_PHONEME_EVENTS | self.INITIALIZE_PHONEME_IPA
        )
        if self.sample_rate <= 0:
            raise OSError("espeak_Initialize failed")
        self.chunks = []
        self.events = []
        callback_type = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_short), ctypes.c_int, ctypes.POINTER(Event))
        self.callback = callback_type(self._collect)  # kept: the library holds only a pointer
        self.lib.espeak_SetSynthCallback(self.callback)

    def _collect(self, wav, count, events):
        if wav and count > 0:
            self.chunks.append(self.ctypes.string_at(wav, count * 2))
        i = 0
        while events[i].type != self.EVENT_LIST_TERMINATED:
            if events[i].type == self.EVENT_PHONEME:
                self.events.append((events[i].id.decode("utf-8", "replace"), events[i].sample))
            i += 1
        return 0

    def speak(self, text, voice, pitch, words_per_minute):
        """(s16le bytes, [[ipa, samples], ...]) for the whole text; a pause has the empty phoneme."""
        if self.lib.espeak_SetVoiceByName(voice.encode()) != 0:
            raise ValueError(f"espeak-ng has no voice {voice!r}")
        self.lib.espeak_SetParameter(self.RATE, int(words_per_minute), 0)
        self.lib.espeak_SetParameter(self.PITCH, int(pitch), 0)
        self.chunks, self.events = [], []
        data = text.encode("utf-8")
        self.lib.espeak_Synth(data, len(data) + 1, 0, self.POS_CHARACTER, 0, self.CHARS_UTF8, None, None)
        self.lib.espeak_Synchronize()
        pcm = b"".join(self.chunks)
        total = len(pcm) // 2
        phonemes = []
        for index, (symbol, start) in enumerate(self.events):
            end = self.events[index + 1][1] if index + 1 < len(self.events) else total
            if end > start:
                phonemes.append([symbol or ",", end - start])
        if self.events and self.events[0][1] > 0:
            phonemes.insert(0, [",", self.events[0][1]])
        return pcm, phonemes


def load_espeak():
    try:
        return Espeak()
    except OSError:
        return None


def warm_up(recognisers, speaker):
    """The first transcription and the first synthesis pay for lazy initialisation: measured
    in a session's first turn, Whisper took 1.9 s against 0.6-0.9 s after, and the greeting's
    first Piper audio 0.7-1.0 s against 0.15 s. Paid here, before the process takes a job."""
    noise = (np.random.default_rng(0).standard_normal(SAMPLE_RATE_IN) * 0.01).astype(np.float32)
    for recogniser in recognisers.values():
        recogniser.transcribe(noise, None, ["en"])
    for _ in speaker.speak("Hello there.", 1.0, 1.0):
        pass


def worker(jobs, handle):
    """A worker thread's loop: each request not cancelled before its turn goes to `handle`; a
    failure is that request's error (the job goes on), and the request is finished either way."""
    while True:
        header, payload = jobs.get()
        request_id = header["id"]
        if take_cancelled(request_id):
            finished(request_id)
            continue
        try:
            handle(request_id, header, payload)
        except Exception as error:  # the job goes on; this request fails
            send({"id": request_id, "error": f"{type(error).__name__}: {error}"})
        finally:
            finished(request_id)


def recognise(recognisers, request_id, header, payload):
    started = time.perf_counter()
    audio = np.frombuffer(payload, dtype="<i2").astype(np.float32) / 32768.0
    audio = drop_stale_lead(to_16k(audio, int(header.get("sampleRate", SAMPLE_RATE_IN))))
    recogniser = recognisers[header.get("model", "en")]
    text, language, probability, window = recogniser.transcribe(audio, header.get("language"), header.get("allowed") or [])
    send({
        "id": request_id,
        "text": text,
        "language": language,
        "probability": probability,
        "seconds": time.perf_counter() - started,
        "windowSeconds": window,
    })


def synthesise(speaker, espeak, request_id, header, _payload):
    if header.get("engine") == "espeak-ng":
        if espeak is None:
            raise OSError("libespeak-ng is not available")
        sample_rate = espeak.sample_rate
        sentences = [espeak.speak(header["text"], header["voice"], header["pitch"], header["wordsPerMinute"])]
    else:
        sample_rate = speaker.sample_rate
        sentences = speaker.speak(header["text"], float(header.get("lengthScale", 1.0)), float(header.get("pitchFactor", 1.0)))
    for pcm, phonemes in sentences:
        if take_cancelled(request_id):
            break
        send({"id": request_id, "sampleRate": sample_rate, "phonemes": phonemes}, pcm)
    send({"id": request_id, "done": True})


def watch_parent():
    parent = os.getppid()
    while os.getppid() == parent:
        time.sleep(0.5)
    os._exit(0)


def read_exactly(stream, count):
    data = bytearray()
    while len(data) < count:
        chunk = stream.read(count - len(data))
        if not chunk:
            raise EOFError
        data.extend(chunk)
    return bytes(data)


def main():
    settings = json.loads(sys.argv[1])
    threading.Thread(target=watch_parent, daemon=True).start()
    started = time.perf_counter()
    threads = int(settings.get("threads", 2))
    recognisers = {name: Recogniser(path, threads) for name, path in settings["whisper"].items()}
    speaker = Speaker(settings["piper"]["model"], settings["piper"]["config"], threads)
    warm_up(recognisers, speaker)
    recognition_jobs = queue.Queue()
    speech_jobs = queue.Queue()
    threading.Thread(target=worker, args=(recognition_jobs, functools.partial(recognise, recognisers)), daemon=True).start()
    espeak = load_espeak()
    threading.Thread(target=worker, args=(speech_jobs, functools.partial(synthesise, speaker, espeak)), daemon=True).start()
    send({"ready": True, "seconds": time.perf_counter() - started, "sampleRate": speaker.sample_rate, "espeak": espeak is not None})

    stdin = sys.stdin.buffer
    try:
        while True:
            line = stdin.readline()
            if not line:
                break
            header = json.loads(line)
            payload = read_exactly(stdin, header["bytes"]) if header.get("bytes") else b""
            op = header.get("op")
            if op == "transcribe":
                queued(header["id"])
                recognition_jobs.put((header, payload))
            elif op == "speak":
                queued(header["id"])
                speech_jobs.put((header, payload))
            elif op == "cancel":
                cancel(header["target"])
            else:
                send({"id": header.get("id"), "error": f"unknown op {op!r}"})
    except EOFError:
        pass
    # stdin closed: the parent is done with us (or gone).
    os._exit(0)


if __name__ == "__main__":
    main()
