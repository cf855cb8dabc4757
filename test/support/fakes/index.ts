// The three cloud providers faked at the wire, started together, with the environment that
// points the service (cloning) and its agent jobs (STT, LLM, TTS) at them.
import { type FakeDeepgram, startFakeDeepgram } from './deepgram.ts';
import { type FakeElevenLabs, startFakeElevenLabs } from './elevenlabs.ts';
import { type FakeOpenAI, startFakeOpenAI } from './openai.ts';

export interface ProviderFakes {
  deepgram: FakeDeepgram;
  openai: FakeOpenAI;
  elevenlabs: FakeElevenLabs;
  /** DEEPGRAM_*, OPENAI_*, LLM_MODEL, ELEVENLABS_* for loadProviders. */
  env: Record<string, string>;
  /**
   * From now on, whether either voice (ElevenLabs' contexts, OpenAI's speech) was given a text.
   * The fakes serve every suite of a test process: what suites before had spoken is not counted.
   */
  spokenFromNow(): (text: string) => boolean;
  stop(): Promise<void>;
}

export async function startProviderFakes(): Promise<ProviderFakes> {
  const deepgram = startFakeDeepgram();
  const openai = startFakeOpenAI();
  const elevenlabs = await startFakeElevenLabs();
  return {
    deepgram,
    openai,
    elevenlabs,
    env: {
      DEEPGRAM_API_KEY: 'fake-deepgram-key',
      DEEPGRAM_BASE_URL: deepgram.url,
      OPENAI_API_KEY: 'fake-openai-key',
      OPENAI_BASE_URL: openai.url,
      LLM_MODEL: 'gpt-4o-mini',
      ELEVENLABS_API_KEY: 'fake-elevenlabs-key',
      ELEVENLABS_BASE_URL: elevenlabs.baseUrl,
    },
    spokenFromNow() {
      const [contexts, speeches] = [elevenlabs.received.contexts.length, openai.speeches.length];
      return (text) =>
        elevenlabs.received.contexts
          .slice(contexts)
          .some((c) => c.texts.join('').replace(/\s+/g, ' ').includes(text)) ||
        openai.speeches.slice(speeches).some((s) => s.input.includes(text));
    },
    async stop() {
      await Promise.all([deepgram.stop(), openai.stop(), elevenlabs.stop()]);
    },
  };
}
