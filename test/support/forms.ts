// Building identity forms as a client would send them.
import { portraitJpeg } from '../fixtures/index.ts';

export type FormFields = Record<string, string | Blob | undefined>;

export function form(fields: FormFields): FormData {
  const data = new FormData();
  for (const [key, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (typeof value === 'string') data.append(key, value);
    else data.append(key, value, (value as File).name ?? key);
  }
  return data;
}

export function file(bytes: Uint8Array, name: string, type = 'application/octet-stream'): File {
  return new File([bytes as Uint8Array<ArrayBuffer>], name, { type });
}

let cachedPortrait: Uint8Array | undefined;
/** A 1024×683 JPEG of a real portrait (NASA's astronaut), made once. */
export async function portrait(): Promise<File> {
  cachedPortrait ??= await portraitJpeg({ width: 1024, height: 683 });
  return file(cachedPortrait, 'portrait.jpg', 'image/jpeg');
}

export async function identityForm(fields: FormFields = {}): Promise<FormData> {
  return form({ name: 'Ada', prompt: 'You are Ada, a friendly guide.', image: await portrait(), ...fields });
}

export interface IdentityBody {
  identity_id: string;
  name: string;
  language: string;
  prompt: string;
  image: string;
  audio: string | null;
  status: string;
  detail: string | null;
  pipeline_id: string;
  provider_avatar_id: string | null;
  outcome_schema: Record<string, unknown> | null;
  created_at: string;
  updated_at: string;
}
