// The account page's "Recording storage" (docs/api.md#recording-storage): the account's own S3
// bucket for its recordings and its retention, over the API's own /recording-storage routes.
// Saving replaces the whole settings (PUT): the secret is asked for each time, since the
// service never gives it back.
import { ApiError, api } from '../api.ts';
import { h, replaceChildren } from '../dom.ts';
import {
  clearError,
  clearFieldProblems,
  errorBox,
  field,
  onSubmit,
  showError,
  showFieldProblems,
  statusLine,
  whileBusy,
} from '../forms.ts';

const PATH = '/console/api/recording-storage';

interface RecordingStorage {
  store: 'service' | 'customer';
  endpoint: string | null;
  bucket: string | null;
  region: string | null;
  prefix: string;
  access_key_id: string | null;
  secret_set: boolean;
  retention_days: number | null;
  updated_at: string;
}

const BUCKET_FIELDS = ['endpoint', 'bucket', 'access_key_id', 'secret_access_key'] as const;

function input(name: string, attributes: Record<string, string | boolean> = {}): HTMLInputElement {
  return h('input', { id: `storage-${name.replaceAll('_', '-')}`, name, type: 'text', ...attributes });
}

/** What is saved, in words: never the secret, only that there is one. */
function savedSummary(saved: RecordingStorage | undefined): HTMLElement {
  const retention =
    saved?.retention_days === null || saved?.retention_days === undefined
      ? "the service's default"
      : saved.retention_days === 0
        ? 'kept until deleted'
        : `${saved.retention_days} days`;
  if (!saved?.bucket)
    return h(
      'p',
      { id: 'storage-saved' },
      "New recordings go to the service's storage. Retention there: ",
      h('strong', null, retention),
      '.',
    );
  return h(
    'p',
    { id: 'storage-saved' },
    'New recordings go to your bucket ',
    h('strong', null, saved.bucket),
    ` at ${saved.endpoint}, as ${saved.prefix}{session id}.mp4 (access key ${saved.access_key_id}; secret saved, not shown). `,
    `Retention in the service's storage (older recordings): ${retention}.`,
  );
}

/** The "Recording storage" card; loads the saved settings itself. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export function recordingStorageCard(): HTMLElement {
  const controls = {
    endpoint: input('endpoint', { type: 'url', placeholder: 'https://s3.eu-central-1.amazonaws.com' }),
    bucket: input('bucket'),
    region: input('region', { placeholder: 'us-east-1' }),
    prefix: input('prefix', { placeholder: 'recordings/' }),
    access_key_id: input('access_key_id', { autocomplete: 'off' }),
    secret_access_key: input('secret_access_key', { type: 'password', autocomplete: 'new-password' }),
    retention_days: input('retention_days', { type: 'number', min: '0', step: '1' }),
  };
  const saved = h('div', { id: 'storage-summary', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const save = h('button', { type: 'submit', id: 'save-storage' }, 'Save');
  const useService = h(
    'button',
    { type: 'button', id: 'use-service-storage', class: 'secondary' },
    "Use the service's storage",
  );
  const error = errorBox('storage-form-error');
  const status = statusLine('storage-status');
  const form = h(
    'form',
    { id: 'storage-form', class: 'card narrow' },
    h('h2', null, 'Recording storage'),
    saved,
    h(
      'p',
      { class: 'hint' },
      "Your own S3-compatible bucket: the service writes and deletes a test object before saving. Saving replaces the settings, so give the secret each time (it is never shown again). Leave the bucket fields empty to keep the service's storage and set only the retention.",
    ),
    field('Endpoint', controls.endpoint),
    field('Bucket', controls.bucket),
    field('Region', controls.region, 'Optional.'),
    field('Prefix', controls.prefix, 'Optional: put before each file name, e.g. recordings/.'),
    field('Access key id', controls.access_key_id),
    field('Secret access key', controls.secret_access_key, 'Write-only: kept encrypted.'),
    field(
      'Retention days',
      controls.retention_days,
      "How long the service's storage keeps your recordings (0: until deleted); empty: the service's default. Files in your bucket are yours to expire.",
    ),
    error,
    h('div', { class: 'actions' }, save, useService),
    status,
  );

  const show = (settings: RecordingStorage | undefined) => {
    replaceChildren(saved, savedSummary(settings));
    controls.endpoint.value = settings?.endpoint ?? '';
    controls.bucket.value = settings?.bucket ?? '';
    controls.region.value = settings?.region ?? '';
    controls.prefix.value = settings?.prefix ?? '';
    controls.access_key_id.value = settings?.access_key_id ?? '';
    controls.secret_access_key.value = '';
    controls.retention_days.value = settings?.retention_days === null ? '' : String(settings?.retention_days ?? '');
  };
  const failed = (failure: unknown) => {
    showFieldProblems(form, failure);
    showError(error, failure);
  };
  const reset = () => {
    clearError(error);
    clearFieldProblems(form);
    status.textContent = '';
  };

  void api.get<RecordingStorage>(PATH).then(show, (failure: unknown) => {
    if (failure instanceof ApiError && failure.status === 404) show(undefined);
    else failed(failure);
  });

  onSubmit(form, error, async () => {
    status.textContent = '';
    const withBucket = BUCKET_FIELDS.some((name) => controls[name].value.trim() !== '');
    const retention = controls.retention_days.value.trim();
    const body: Record<string, unknown> = { retention_days: retention === '' ? null : Number(retention) };
    if (withBucket) {
      for (const name of BUCKET_FIELDS) body[name] = controls[name].value.trim();
      body.prefix = controls.prefix.value.trim();
      body.region = controls.region.value.trim() || null;
    }
    const result = await whileBusy([save, useService], 'Checking the bucket…', () =>
      api.put<RecordingStorage>(PATH, body),
    );
    show(result);
    status.textContent = withBucket ? 'Saved: the bucket passed its check.' : 'Saved.';
  });
  useService.addEventListener('click', async () => {
    reset();
    try {
      await whileBusy([useService, save], 'Switching…', () => api.delete(PATH));
      show(undefined);
      status.textContent = "New recordings go to the service's storage, with its retention.";
    } catch (failure) {
      failed(failure);
    }
  });
  return form;
}
