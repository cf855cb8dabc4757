// ElevenLabs instant voice cloning, which the agents plugin has no helper for:
// POST /v1/voices/add (multipart `name`, `files`) → {voice_id}; DELETE /v1/voices/{id}.
import type { CloudProvider } from '../config.ts';

const PUBLIC_API = 'https://api.elevenlabs.io/v1';
/** Cloning a 2-minute sample takes seconds; a minute means the provider is not answering. */
const REQUEST_TIMEOUT_MS = 60_000;

/** The provider refused or did not answer; the message is safe to show to the API client. */
export class VoiceProviderError extends Error {}

export interface VoiceSample {
  bytes: Uint8Array;
  contentType: string;
  fileName: string;
}

export class ElevenLabsVoices {
  private readonly baseUrl: string;

  constructor(private readonly settings: CloudProvider) {
    this.baseUrl = settings.baseUrl ?? PUBLIC_API;
  }

  async clone(name: string, sample: VoiceSample, description?: string): Promise<string> {
    const form = new FormData();
    form.append('name', name);
    if (description) form.append('description', description);
    form.append(
      'files',
      new File([sample.bytes as Uint8Array<ArrayBuffer>], sample.fileName, { type: sample.contentType }),
    );
    const response = await this.request('Voice cloning', 'POST', '/voices/add', form);
    const body = (await response.json().catch(() => undefined)) as { voice_id?: unknown } | undefined;
    if (typeof body?.voice_id !== 'string' || !body.voice_id) {
      throw new VoiceProviderError('Voice cloning failed: ElevenLabs answered without a voice_id');
    }
    return body.voice_id;
  }

  /** A voice that is already gone counts as deleted. */
  async remove(voiceId: string): Promise<void> {
    await this.request('Deleting a cloned voice', 'DELETE', `/voices/${encodeURIComponent(voiceId)}`, undefined, [404]);
  }

  private async request(
    action: string,
    method: string,
    path: string,
    body: FormData | undefined,
    alsoFine: number[] = [],
  ): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${this.baseUrl}${path}`, {
        method,
        body,
        headers: { 'xi-api-key': this.settings.apiKey },
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const reason =
        error instanceof Error && error.name === 'TimeoutError' ? 'did not answer in time' : 'could not be reached';
      throw new VoiceProviderError(`${action} failed: ElevenLabs ${reason}`, { cause: error });
    }
    if (!response.ok && !alsoFine.includes(response.status)) {
      throw new VoiceProviderError(
        `${action} failed: ElevenLabs answered ${response.status}${await providerMessage(response)}`,
      );
    }
    return response;
  }
}

/** ElevenLabs errors look like {detail: {status, message}} (or FastAPI's list); keep a short message. */
async function providerMessage(response: Response): Promise<string> {
  const body = (await response.json().catch(() => undefined)) as { detail?: unknown } | undefined;
  const detail = body?.detail;
  const message =
    typeof detail === 'string'
      ? detail
      : detail && typeof detail === 'object' && 'message' in detail && typeof detail.message === 'string'
        ? detail.message
        : undefined;
  return message ? ` (${message.slice(0, 300)})` : '';
}
