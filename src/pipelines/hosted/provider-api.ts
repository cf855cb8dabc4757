// Calls to a hosted avatar provider's HTTP API from the control plane: a time limit, and the
// provider's failures as our errors (502: the provider, not the caller, is at fault).
import { ApiError, invalid } from '../../http/errors.ts';

export interface ProviderApi {
  /** Shown in errors: "Anam", "Beyond Presence". */
  name: string;
  baseUrl: string;
  headers: Record<string, string>;
}

const TIMEOUT_MS = 15_000;

export async function callProvider(api: ProviderApi, method: string, path: string, body?: BodyInit): Promise<Response> {
  try {
    return await fetch(`${api.baseUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: api.headers,
      body,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
  } catch (error) {
    throw new ApiError(
      502,
      `${api.name} did not answer (${error instanceof Error ? error.name : 'error'}); nothing was kept or charged`,
    );
  }
}

export async function providerFailure(api: ProviderApi, response: Response, what: string): Promise<ApiError> {
  const text = (await response.text().catch(() => '')).slice(0, 200);
  return new ApiError(
    502,
    `${api.name} could not ${what} (HTTP ${response.status}${text ? `: ${text}` : ''}); nothing was kept or charged`,
  );
}

/** Looks an avatar up; 4xx on the id (404, or a malformed id) means the provider does not know it. */
export async function lookUpAvatar(api: ProviderApi, id: string): Promise<Record<string, unknown>> {
  const response = await callProvider(api, 'GET', `/v1/avatars/${encodeURIComponent(id)}`);
  if (response.ok) return ((await response.json().catch(() => ({}))) ?? {}) as Record<string, unknown>;
  if (response.status === 400 || response.status === 404 || response.status === 422) {
    throw invalid(
      ['body', 'provider_avatar_id'],
      `${api.name} has no avatar "${id.slice(0, 100)}" for this service's key`,
      'unknown_provider_avatar',
    );
  }
  throw await providerFailure(api, response, 'look up the avatar');
}
