// The offline models for real: Whisper hears espeak-ng speech, the reply model (Qwen2.5-Coder
// 0.5B) answers from its instructions and history with the threads it is given, Piper and
// espeak-ng speak (with a voice profile's pitch), and
// what they speak is intelligible to Whisper again. Needs the models the bootstrap installs
// (`npm test` does; run alone: `bun test test/agent/offline` after one `npm test`).
// biome-ignore-all lint/style/noExcessiveLinesPerFile: the offline models are loaded once (seconds of both cores) and shared by every test
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { initializeLogger, llm, type stt } from '@livekit/agents';
import { AudioFrame } from '@livekit/rtc-node';
import {
  joinFrames,
  loadOfflineModels,
  OFFLINE_TTS_SAMPLE_RATE,
  type OfflineModels,
  type OfflineVoiceProfile,
  toLlamaHistory,
} from '../../../agent/providers/offline/index.ts';
import { VISEME_CUES, type VisemeCue } from '../../../agent/visemes/index.ts';
import { loadProviders } from '../../../src/config.ts';
import type { SpokenLanguage } from '../../../src/contract/index.ts';
import { espeak, rms } from '../../support/fakes/speech.ts';
import { eventually } from '../../support/visitor.ts';
import { medianPitchHz } from './pitch.ts';
import { words } from './words.ts';

const MIC_RATE = 48_000; // what the room delivers
const timings: string[] = [];

let models: OfflineModels;
/** What the job's census would say: the threads of the next reply. */
let replyThreads = 1;

beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'warn' });
  const startedAt = performance.now();
  models = await loadOfflineModels({
    modelsDir: loadProviders(process.env).modelsDir,
    replyThreads: () => replyThreads,
  });
  timings.push(`load all models: ${ms(startedAt)}`);
}, 120_000);

afterAll(async () => {
  await models?.close();
  console.log(`offline model timings:\n  ${timings.join('\n  ')}`);
});

function ms(startedAt: number): string {
  return `${Math.round(performance.now() - startedAt)} ms`;
}

async function spoken(text: string, voice: string, wordsPerMinute: number): Promise<AudioFrame> {
  const { samples } = await espeak(text, { voice, wordsPerMinute, sampleRate: MIC_RATE });
  return new AudioFrame(samples, MIC_RATE, 1, samples.length);
}

async function recognise(
  language: SpokenLanguage | 'auto',
  frame: AudioFrame | AudioFrame[],
  label: string,
): Promise<stt.SpeechData> {
  const recogniser = models.stt(language);
  const startedAt = performance.now();
  const event = await recogniser.recognize(frame);
  timings.push(`STT ${label} (${language}): ${ms(startedAt)}`);
  expect(event.alternatives).toBeDefined();
  return event.alternatives![0];
}

async function synthesise(language: SpokenLanguage, profile: OfflineVoiceProfile | null, text: string, label: string) {
  const voice = models.tts({ language, profile });
  const startedAt = performance.now();
  const frames: AudioFrame[] = [];
  let finals = 0;
  for await (const audio of voice.synthesize(text)) {
    frames.push(audio.frame);
    if (audio.final) finals++;
  }
  timings.push(`TTS ${label} (${voice.model}): ${ms(startedAt)}`);
  const samples = new Int16Array(frames.reduce((n, frame) => n + frame.data.length, 0));
  let offset = 0;
  for (const frame of frames) {
    expect(frame.sampleRate).toBe(OFFLINE_TTS_SAMPLE_RATE);
    expect(frame.channels).toBe(1);
    samples.set(frame.data, offset);
    offset += frame.data.length;
  }
  return { frames, samples, finals, seconds: samples.length / OFFLINE_TTS_SAMPLE_RATE, engine: voice.model };
}

async function reply(chatCtx: llm.ChatContext, label: string): Promise<{ text: string; firstTokenMs: number }> {
  const startedAt = performance.now();
  let firstTokenMs = -1;
  let text = '';
  for await (const chunk of models.llm().chat({ chatCtx })) {
    if (chunk.delta?.content) {
      if (firstTokenMs < 0) firstTokenMs = performance.now() - startedAt;
      text += chunk.delta.content;
    }
  }
  timings.push(
    `LLM ${label}: first token ${Math.round(firstTokenMs)} ms, whole reply ${ms(startedAt)} (${JSON.stringify(text)})`,
  );
  return { text, firstTokenMs };
}

describe('offline speech-to-text (Whisper)', () => {
  test('recognises an English question spoken by espeak-ng', async () => {
    const heard = await recognise(
      'en',
      await spoken('What is the weather like in Paris today?', 'en-us', 150),
      'English question',
    );
    const got = words(heard.text);
    expect(got).toContain('weather');
    expect(got).toContain('paris');
    expect(String(heard.language)).toBe('en');
  });

  test("in 'auto' mode detects Spanish and transcribes it in Spanish", async () => {
    const frame = await spoken(
      'Buenos días. Me gustaría saber qué tiempo hará mañana en Madrid, por favor.',
      'es',
      130,
    );
    const heard = await recognise('auto', frame, 'Spanish sentence');
    expect(String(heard.language)).toBe('es');
    const got = words(heard.text);
    expect(got).toContain('madrid');
    expect(
      got.filter((word) => ['buenos', 'dias', 'gustaria', 'saber', 'tiempo', 'manana', 'favor'].includes(word)).length,
    ).toBeGreaterThanOrEqual(4);
  });

  test("in 'auto' mode still hears English as English", async () => {
    const heard = await recognise(
      'auto',
      await spoken('Good morning. Could you tell me about this painting?', 'en-us', 150),
      'English in auto',
    );
    expect(String(heard.language)).toBe('en');
    expect(words(heard.text)).toContain('painting');
  });

  test("in 'auto' mode detects Polish, from the VAD's list of 10 ms frames", async () => {
    const frame = await spoken('Dzień dobry. Chciałbym wiedzieć, jaka będzie jutro pogoda w Krakowie.', 'pl', 120);
    const frames: AudioFrame[] = [];
    for (let start = 0; start < frame.data.length; start += MIC_RATE / 100) {
      const part = frame.data.slice(start, start + MIC_RATE / 100);
      frames.push(new AudioFrame(part, MIC_RATE, 1, part.length));
    }
    const heard = await recognise('auto', frames, 'Polish sentence');
    expect(String(heard.language)).toBe('pl');
    // espeak-ng's Polish is rough; Whisper base still gets the plain words.
    expect(
      words(heard.text).filter((word) =>
        ['dzien', 'dobry', 'chcialbym', 'jaka', 'bedzie', 'jutro', 'pogoda'].includes(word),
      ).length,
    ).toBeGreaterThanOrEqual(3);
  });

  test('pinned Ukrainian transcribes in Cyrillic', async () => {
    const frame = await spoken('Добрий день. Я хотів би дізнатися, яка завтра буде погода в Києві.', 'uk', 130);
    const heard = await recognise('uk', frame, 'Ukrainian sentence');
    expect(String(heard.language)).toBe('uk');
    const letters = heard.text.replace(/[^\p{L}]/gu, '');
    expect(letters.length).toBeGreaterThan(10);
    expect(letters.replace(/\p{Script=Cyrillic}/gu, '').length).toBe(0);
  });

  test("the VAD's frames are joined in order, in linear time", () => {
    const frames: AudioFrame[] = [];
    for (let i = 0; i < 1_000; i++) frames.push(new AudioFrame(new Int16Array(480).fill(i), MIC_RATE, 1, 480));
    const startedAt = performance.now();
    const joined = joinFrames(frames);
    // agents' own mergeFrames takes seconds here (it copies everything again for every frame).
    expect(performance.now() - startedAt).toBeLessThan(500);
    expect(joined.samplesPerChannel).toBe(480_000);
    expect(joined.data[0]).toBe(0);
    expect(joined.data[480 * 500 + 7]).toBe(500);
    expect(joined.data[479_999]).toBe(999);
    expect(() => joinFrames([frames[0]!, new AudioFrame(new Int16Array(160), 16_000, 1, 160)])).toThrow();
  });

  test('silence gives an empty transcript, not a hallucination', async () => {
    const quiet = new Int16Array(MIC_RATE * 2);
    const heard = await recognise('en', new AudioFrame(quiet, MIC_RATE, 1, quiet.length), 'two seconds of silence');
    expect(words(heard.text).length).toBeLessThanOrEqual(2);
  });
});

describe('offline language model (Qwen2.5-Coder-0.5B)', () => {
  const guide = (fact: string) => `You are a guide at the city museum. Answer in one or two short sentences. ${fact}`;
  /** The guide told `fact`, then asked `question`: the chat to reply to. */
  const guideAsked = (fact: string, question: string) => {
    const chatCtx = llm.ChatContext.empty();
    chatCtx.addMessage({ role: 'system', content: guide(fact) });
    chatCtx.addMessage({ role: 'user', content: question });
    return chatCtx;
  };

  test('streams a reply quickly that uses a fact from the instructions', async () => {
    const chatCtx = guideAsked('The museum opens at nine in the morning.', 'When does the museum open?');
    const { text, firstTokenMs } = await reply(chatCtx, 'fact from instructions (nine)');
    expect(text).toMatch(/\b(nine|9)\b/i);
    // The model's first reply since it loaded, beside another stream of suites: 0.4–5.4 s seen.
    expect(firstTokenMs).toBeGreaterThanOrEqual(0);
    expect(firstTokenMs).toBeLessThan(10_000);
  });

  test('other instructions give another answer, as quickly once the model is warm', async () => {
    const chatCtx = guideAsked('The museum opens at eleven in the morning.', 'When does the museum open?');
    const { text, firstTokenMs } = await reply(chatCtx, 'fact from instructions (eleven)');
    expect(text).toMatch(/\b(eleven|11)\b/i);
    expect(text).not.toMatch(/\b(nine|9)\b/i);
    expect(firstTokenMs).toBeLessThan(5_000);
  });

  test('names what only the instructions name', async () => {
    const chatCtx = guideAsked('Its most famous painting is the Green Lion.', 'What is the most famous painting here?');
    const { text } = await reply(chatCtx, 'painting from instructions');
    expect(text.toLowerCase()).toContain('green lion');
  });

  test('takes its own name from the instructions (SmolLM2-135M did in 1–5 of 12 prompts)', async () => {
    for (const name of ['Marta', 'Kofi']) {
      const chatCtx = llm.ChatContext.empty();
      chatCtx.addMessage({
        role: 'system',
        content: `You are ${name}, a guide at the city museum. Answer in one short sentence.`,
      });
      chatCtx.addMessage({ role: 'user', content: 'What is your name?' });
      const { text } = await reply(chatCtx, `own name (${name})`);
      expect(text).toContain(name);
    }
  });

  test('a reply takes the threads it is given before it starts: two when alone on the machine, one beside other sessions', async () => {
    const ask = () => {
      const chatCtx = guideAsked('The museum opens at nine in the morning.', 'When does the museum open?');
      return chatCtx;
    };
    for (const threads of [2, 1, 2]) {
      replyThreads = threads;
      await reply(ask(), `${threads} thread(s)`);
      expect(models.llm().threadsUsed).toBe(threads);
    }
    // The read-ahead of the replies' prompt during the greeting takes one, whatever is free.
    void models.llm().prime(guide('The museum opens at ten.'), 'Hello, I am your guide.');
    await eventually(() => models.llm().threadsUsed === 1, 5_000, 'the prompt read ahead on one thread');
    replyThreads = 1;
  });

  test('a visitor who asked before the greeting started is answered: the read-ahead never stops a reply', async () => {
    // On a loaded machine the typed question came before the greeting played; the greeting's
    // read-ahead stopped the reply already running, which ended with no token and was never spoken.
    const chatCtx = guideAsked('The museum opens at nine in the morning.', 'When does the museum open?');
    const answer = reply(chatCtx, 'asked before the greeting');
    await Bun.sleep(50);
    void models.llm().prime(guide('The museum opens at nine in the morning.'), 'Hello, I am your guide.');
    expect((await answer).text).toMatch(/\b(nine|9)\b/i);
  });

  test('is named after its model file in the metrics', () => {
    expect(models.llm().model).toBe('qwen2.5-coder-0.5b-instruct-q4_k_m');
  });

  test('uses the conversation history', async () => {
    const chatCtx = guideAsked('', 'When does the museum open?');
    chatCtx.addMessage({ role: 'assistant', content: 'The museum opens at eleven in the morning.' });
    // Known weakness, not hidden: Qwen2.5-Coder answers a follow-up that opens with "Sorry,"
    // ("Sorry, at what time?") with "Sorry, but I can't assist with that." (docs/benchmarks.md).
    chatCtx.addMessage({ role: 'user', content: 'At what time?' });
    const { text } = await reply(chatCtx, 'history');
    expect(text).toMatch(/\b(eleven|11)\b/i);
  });

  test('the chat context becomes a llama chat history: instructions first, images dropped, turns merged', () => {
    const chatCtx = llm.ChatContext.empty();
    chatCtx.addMessage({ role: 'system', content: 'Be brief.' });
    chatCtx.addMessage({
      role: 'user',
      content: [llm.createImageContent({ image: 'data:image/jpeg;base64,AAAA' }), 'Hello'],
    });
    chatCtx.addMessage({ role: 'user', content: 'Anyone there?' });
    chatCtx.addMessage({ role: 'assistant', content: 'Hi!' });
    chatCtx.addMessage({ role: 'user', content: [llm.createImageContent({ image: 'data:image/jpeg;base64,AAAA' })] });
    chatCtx.addMessage({ role: 'developer', content: 'Answer in Spanish.' });
    chatCtx.addMessage({ role: 'user', content: 'Thanks' });
    expect(toLlamaHistory(chatCtx)).toEqual([
      { type: 'system', text: 'Be brief.\n\nAnswer in Spanish.' },
      { type: 'user', text: 'Hello\nAnyone there?' },
      { type: 'model', response: ['Hi!'] },
      { type: 'user', text: 'Thanks' },
    ]);
    // Instructions after the last turn are that reply's own: they stay last.
    chatCtx.addMessage({ role: 'assistant', content: 'You are welcome.' });
    chatCtx.addMessage({ role: 'system', content: 'Tell them the shop closes early.' });
    expect(toLlamaHistory(chatCtx).slice(-2)).toEqual([
      { type: 'model', response: ['You are welcome.'] },
      { type: 'system', text: 'Tell them the shop closes early.' },
    ]);
  });

  test('ignores camera images (no vision) and stops after two sentences', async () => {
    const chatCtx = llm.ChatContext.empty();
    chatCtx.addMessage({ role: 'system', content: 'You are a storyteller. Tell long stories with many sentences.' });
    chatCtx.addMessage({
      role: 'user',
      content: [
        llm.createImageContent({
          image:
            'data:image/jpeg;base64,/9j/4AAQSkZJRgABAQAAAQABAAD/2wBDAP//////////////////////////////////////////////////////////////////////////////////////2wBDAf//////////////////////////////////////////////////////////////////////////////////////wAARCAABAAEDASIAAhEBAxEB/8QAFAABAAAAAAAAAAAAAAAAAAAAA//EABQQAQAAAAAAAAAAAAAAAAAAAAD/xAAUAQEAAAAAAAAAAAAAAAAAAAAA/8QAFBEBAAAAAAAAAAAAAAAAAAAAAP/aAAwDAQACEQMRAD8AH//Z',
        }),
        'Tell me a story about a dragon and a knight.',
      ],
    });
    const { text } = await reply(chatCtx, 'capped story');
    expect(text.trim().length).toBeGreaterThan(0);
    const sentenceEnds = text.trim().match(/[.!?]+["')\]]*(\s|$)/g) ?? [];
    expect(sentenceEnds.length).toBeLessThanOrEqual(2);
    expect(text).not.toContain('<|im_');
  });

  test('a new turn stops the reply still running and gets the sequence', async () => {
    const long = llm.ChatContext.empty();
    long.addMessage({ role: 'system', content: 'You are a storyteller.' });
    long.addMessage({ role: 'user', content: 'Tell me a very long story.' });
    const first = models.llm().chat({ chatCtx: long });
    const firstText = (async () => {
      let text = '';
      for await (const chunk of first) text += chunk.delta?.content ?? '';
      return text;
    })();
    const chatCtx = guideAsked('Its most famous painting is the Green Lion.', 'What is the most famous painting here?');
    const second = await reply(chatCtx, 'after an interrupted reply');
    expect(second.text.toLowerCase()).toContain('green lion');
    await firstText; // ends (cut short) instead of hanging
  });
});

/** A sentence's speech: a plausible length (1 to 6 s), not silent. */
function expectSpokenSentence(seconds: number, samples: Int16Array): void {
  expect(seconds).toBeGreaterThan(1);
  expect(seconds).toBeLessThan(6);
  expect(rms(samples)).toBeGreaterThan(0.02);
}

describe('offline text-to-speech (Piper, espeak-ng)', () => {
  test('English by default is Piper: a plausible length of non-silent 22 kHz audio', async () => {
    const { seconds, samples, finals, engine } = await synthesise(
      'en',
      null,
      'Hello, and welcome to the city museum.',
      'English sentence',
    );
    expect(engine).toBe('piper');
    expectSpokenSentence(seconds, samples);
    expect(finals).toBe(1);
  });

  test('Spanish is espeak-ng', async () => {
    const { seconds, samples, engine } = await synthesise(
      'es',
      null,
      'Buenos días, bienvenido al museo de la ciudad.',
      'Spanish sentence',
    );
    expect(engine).toBe('espeak-ng');
    expectSpokenSentence(seconds, samples);
  });

  test.each([
    ['en', 'piper', 'Yes, that is right.'],
    ['es', 'espeak-ng', 'Sí, es correcto.'],
  ] as const)(
    '%s (%s) sounds from its first few ms, its lips from its first sound on',
    async (language, engine, text) => {
      const { frames, samples } = await synthesise(language, null, text, `${engine} onset`);
      // Both engines lead each text with 25–65 ms of near silence: that much more wait before a reply.
      // Piper's noise varies each run: its first faint sound (≥ 100) stays at the 5 ms kept before it,
      // a louder one (≥ 300) came 5–18 ms in over repeated runs (a soft onset such as "h" is slower).
      const at = (level: number) => samples.findIndex((sample) => Math.abs(sample) >= level) / OFFLINE_TTS_SAMPLE_RATE;
      expect(at(100)).toBeGreaterThanOrEqual(0);
      expect(at(100)).toBeLessThan(0.007);
      expect(at(300)).toBeLessThan(0.02);
      if (engine === 'piper') {
        // The cues moved back with the cut: the first shape that is not the rest comes with the voice.
        const cues = frames.flatMap((frame, index) =>
          ((frame.userdata[VISEME_CUES] as VisemeCue[] | undefined) ?? []).map((cue) => ({
            ...cue,
            start: cue.start + (index * frame.samplesPerChannel) / OFFLINE_TTS_SAMPLE_RATE,
          })),
        );
        const firstShape = cues.find((cue) => cue.viseme !== 'rest')!;
        expect(firstShape.start).toBeLessThan(0.03);
      }
    },
  );

  test('updateOptions switches the language mid-session', async () => {
    const voice = models.tts({ language: 'en', profile: null });
    expect(voice.model).toBe('piper');
    voice.updateOptions({ language: 'uk' });
    expect(voice.model).toBe('espeak-ng');
    const frame = await voice.synthesize('Добрий день.').collect();
    expect(frame.samplesPerChannel / frame.sampleRate).toBeGreaterThan(0.4);
  });

  test('a low and a high voice profile give measurably different pitch (Piper, English)', async () => {
    const text = 'This painting was made more than three hundred years ago.';
    const low = await synthesise('en', { pitchHz: 80, wordsPerMinute: 160 }, text, 'English, low profile');
    const high = await synthesise('en', { pitchHz: 140, wordsPerMinute: 160 }, text, 'English, high profile');
    expect(low.engine).toBe('piper');
    expect(high.engine).toBe('piper');
    const lowHz = medianPitchHz(low.samples, OFFLINE_TTS_SAMPLE_RATE);
    const highHz = medianPitchHz(high.samples, OFFLINE_TTS_SAMPLE_RATE);
    timings.push(
      `measured F0, Piper: profile 80 Hz -> ${lowHz.toFixed(0)} Hz, profile 140 Hz -> ${highHz.toFixed(0)} Hz`,
    );
    expect(highHz / lowHz).toBeGreaterThan(1.4);
    // The pace stays close to the profile's: same words per minute, similar length.
    expect(Math.abs(high.seconds - low.seconds) / low.seconds).toBeLessThan(0.25);
  });

  test('voice profiles set the pitch and pace of espeak-ng (Spanish), a high voice included', async () => {
    const text = 'Este cuadro fue pintado hace más de trescientos años.';
    const low = await synthesise('es', { pitchHz: 90, wordsPerMinute: 150 }, text, 'Spanish, low profile');
    const high = await synthesise('es', { pitchHz: 220, wordsPerMinute: 150 }, text, 'Spanish, high profile');
    const fast = await synthesise('es', { pitchHz: 90, wordsPerMinute: 260 }, text, 'Spanish, fast profile');
    const lowHz = medianPitchHz(low.samples, OFFLINE_TTS_SAMPLE_RATE);
    const highHz = medianPitchHz(high.samples, OFFLINE_TTS_SAMPLE_RATE);
    timings.push(
      `measured F0, espeak-ng: profile 90 Hz -> ${lowHz.toFixed(0)} Hz, profile 220 Hz -> ${highHz.toFixed(0)} Hz`,
    );
    expect(lowHz).toBeGreaterThan(70);
    expect(lowHz).toBeLessThan(115);
    expect(highHz).toBeGreaterThan(180);
    expect(highHz).toBeLessThan(270);
    expect(fast.seconds).toBeLessThan(low.seconds * 0.8);
  });

  test('a high English profile, beyond what Piper can shift, speaks with espeak-ng at that pitch', async () => {
    const high = await synthesise(
      'en',
      { pitchHz: 210, wordsPerMinute: 170 },
      'Welcome to the museum.',
      'English, high profile',
    );
    expect(high.engine).toBe('espeak-ng');
    const hz = medianPitchHz(high.samples, OFFLINE_TTS_SAMPLE_RATE);
    expect(hz).toBeGreaterThan(170);
    expect(hz).toBeLessThan(260);
  });
});

describe('round trip: what the offline voice says, Whisper understands', () => {
  test('English (Piper) back through Whisper tiny.en', async () => {
    const { frames } = await synthesise('en', null, 'The museum opens at nine in the morning.', 'round trip English');
    const heard = await recognise('en', frames, 'Piper speech');
    const got = words(heard.text);
    expect(got).toContain('museum');
    expect(got).toContain('morning');
  });

  test("Spanish (espeak-ng) back through Whisper base in 'auto' mode", async () => {
    const { frames } = await synthesise(
      'es',
      null,
      'Buenos días. Me gustaría saber qué tiempo hará mañana en Madrid, por favor.',
      'round trip Spanish',
    );
    const heard = await recognise('auto', frames, 'espeak-ng Spanish speech');
    expect(String(heard.language)).toBe('es');
    expect(words(heard.text)).toContain('madrid');
  });
});
