// Webhooks: endpoints that receive the account's events (add: the signing secret is shown
// once; enable or disable, send a test event, delete), each endpoint's recent deliveries with
// the receiver's status codes, and the balance below which `credits.low` is sent.
import { api } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { checkboxField, clearError, errorBox, field, showError, whileBusy } from '../forms.ts';
import { listLoad } from '../list-load.ts';
import { type CreatedWebhook, type Credits, WEBHOOK_EVENTS, type Webhook, type WebhookDelivery } from '../resources.ts';
import { secretOnce } from '../secret-once.ts';
import { cell, dataTable, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

const EVENT_NAMES: Record<(typeof WEBHOOK_EVENTS)[number], string> = {
  'session.started': 'A session started',
  'session.ended': 'A session ended (reason, minutes, credits)',
  'session.summary_ready': "A session's summary was written",
  'session.outcome_ready': "A session's outcome was written",
  'visitor.memory_updated': 'What is remembered of a visitor changed',
  'recording.ready': "A session's recording was stored",
  'recording.failed': "A session's recording could not be made",
  'identity.ready': 'An identity is ready (created or retrained)',
  'identity.training_failed': 'A retrain failed',
  'document.ready': 'A document was processed and is searched',
  'document.failed': 'A document could not be processed',
  'credits.low': 'The balance fell below the threshold',
};

/** How long the page follows a test delivery that is still pending. */
const FOLLOW_MS = 10_000;

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const webhooksPage: Page = async (context) => {
  const url = h('input', {
    id: 'webhook-url',
    name: 'url',
    type: 'url',
    required: true,
    maxlength: 2000,
    placeholder: 'https://example.com/likeness/events',
    autocomplete: 'off',
  });
  const description = h('input', {
    id: 'webhook-description',
    name: 'description',
    maxlength: 500,
    autocomplete: 'off',
    placeholder: 'e.g. Billing system',
  });
  const eventBoxes = WEBHOOK_EVENTS.map((event) =>
    h('input', {
      type: 'checkbox',
      id: `webhook-event-${event.replace('.', '-')}`,
      name: 'events',
      value: event,
      checked: event === 'session.ended',
    }),
  );
  const add = h('button', { type: 'submit', id: 'add-webhook' }, 'Add endpoint');
  const formError = errorBox('webhook-form-error');
  const form = h(
    'form',
    { id: 'webhook-form', class: 'card' },
    field(
      'Endpoint URL',
      url,
      'Events are POSTed here as JSON, signed (Standard Webhooks), and retried for about a day until it answers 2xx.',
    ),
    h(
      'fieldset',
      null,
      h('legend', null, 'Events'),
      ...eventBoxes.map((box, i) => checkboxField(`${WEBHOOK_EVENTS[i]}: ${EVENT_NAMES[WEBHOOK_EVENTS[i]!]}`, box)),
    ),
    field('Description (optional)', description),
    h('div', { class: 'actions' }, add),
    formError,
  );
  const secretSlot = h('div', { id: 'webhook-secret-slot' });
  const listError = errorBox('webhooks-error');
  const list = h('div', { id: 'webhooks-list', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const deliveries = h('section', { id: 'webhook-deliveries', 'aria-live': 'polite' });

  const threshold = h('input', {
    id: 'low-balance-threshold',
    name: 'low_balance_threshold',
    type: 'number',
    min: 0,
    step: 1,
    required: true,
  });
  const saveThreshold = h('button', { type: 'submit', id: 'save-threshold', class: 'secondary' }, 'Save');
  const thresholdStatus = h('span', { id: 'threshold-status', role: 'status', class: 'muted' });
  const thresholdError = errorBox('threshold-error');
  const thresholdForm = h(
    'form',
    { id: 'threshold-form', class: 'card inline-form' },
    field('Send credits.low when a charge takes the balance below (credits; 0: never)', threshold),
    h('div', { class: 'actions' }, saveThreshold, thresholdStatus),
    thresholdError,
  );

  const load = listLoad<{ webhooks: Webhook[] }>('/console/api/webhooks', listError, ({ webhooks }) =>
    replaceChildren(
      list,
      webhooks.length
        ? dataTable(
            'webhooks-table',
            'Your webhook endpoints',
            ['URL', 'Events', 'State', 'Created', 'Actions'],
            webhooks.map(webhookRow),
          )
        : h('p', { class: 'muted' }, 'No endpoints yet.'),
    ),
  );

  function webhookRow(webhook: Webhook): HTMLTableRowElement {
    const test = rowButton('Send test', 'test-webhook', 'plain');
    const show = rowButton('Deliveries', 'show-deliveries', 'secondary');
    const toggle = rowButton(webhook.enabled ? 'Disable' : 'Enable', 'toggle-webhook', 'secondary');
    const remove = rowButton('Delete', 'delete-webhook', 'danger');
    const buttons = [test, show, toggle, remove];
    test.addEventListener('click', async () => {
      try {
        await whileBusy(buttons, 'Sending…', () => api.post(`/console/api/webhooks/${webhook.webhook_id}/test`));
        await followDeliveries(webhook);
      } catch (error) {
        showError(listError, error);
      }
    });
    show.addEventListener('click', () => void showDeliveries(webhook));
    toggle.addEventListener('click', async () => {
      try {
        await whileBusy(buttons, 'Saving…', () =>
          api.patch(`/console/api/webhooks/${webhook.webhook_id}`, { enabled: !webhook.enabled }),
        );
        await load();
      } catch (error) {
        showError(listError, error);
      }
    });
    onConfirmedDelete(remove, {
      question: `Delete the endpoint ${webhook.url}? Events not yet delivered to it are dropped.`,
      action: 'Delete endpoint',
      path: `/console/api/webhooks/${webhook.webhook_id}`,
      busy: buttons,
      errorBox: listError,
      done: () => {
        replaceChildren(deliveries);
        return load();
      },
    });
    return h(
      'tr',
      { 'data-webhook-id': webhook.webhook_id },
      cell(
        'URL',
        h('code', { class: 'reference' }, webhook.url),
        webhook.description ? h('div', { class: 'muted' }, webhook.description) : null,
      ),
      cell('Events', webhook.events.join(', ')),
      cell(
        'State',
        h(
          'span',
          { class: webhook.enabled ? 'badge status-ready' : 'badge' },
          webhook.enabled ? 'Enabled' : 'Disabled',
        ),
      ),
      cell('Created', formatDate(webhook.created_at)),
      cell('Actions', h('div', { class: 'actions' }, ...buttons)),
    );
  }

  async function showDeliveries(webhook: Webhook): Promise<WebhookDelivery[]> {
    try {
      const answer = await api.get<{ deliveries: WebhookDelivery[] }>(
        `/console/api/webhooks/${webhook.webhook_id}/deliveries?limit=20`,
      );
      const rows = answer.deliveries.map((d) =>
        h(
          'tr',
          { 'data-delivery-id': d.delivery_id, 'data-status': d.status },
          cell('Created', formatDate(d.created_at)),
          cell('Event', h('code', null, d.event_type)),
          cell(
            'Status',
            h(
              'span',
              {
                class: `badge status-${d.status === 'delivered' ? 'ready' : d.status === 'failed' ? 'failed' : 'training'}`,
              },
              d.status,
            ),
          ),
          cell('Attempts', String(d.attempts)),
          cell('Answer', d.response_status === null ? '—' : String(d.response_status)),
          cell('Last error', d.last_error ?? (d.next_attempt_at ? `Next try ${formatDate(d.next_attempt_at)}` : '')),
        ),
      );
      replaceChildren(
        deliveries,
        h('h2', null, `Recent deliveries to ${webhook.url}`),
        rows.length
          ? dataTable(
              'deliveries-table',
              'Recent deliveries, newest first',
              ['Created', 'Event', 'Status', 'Attempts', 'Answer', 'Last error'],
              rows,
            )
          : h('p', { class: 'muted' }, 'Nothing sent yet.'),
      );
      return answer.deliveries;
    } catch (error) {
      showError(listError, error);
      return [];
    }
  }

  /** After a test: refresh the deliveries until the newest is settled (or a while has passed). */
  async function followDeliveries(webhook: Webhook): Promise<void> {
    const until = Date.now() + FOLLOW_MS;
    while (!context.signal.aborted) {
      const [newest] = await showDeliveries(webhook);
      if (!newest || newest.attempts > 0 || Date.now() > until) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(formError);
    const events = eventBoxes.filter((box) => box.checked).map((box) => box.value);
    try {
      const created = await whileBusy([add], 'Adding…', () =>
        api.post<CreatedWebhook>('/console/api/webhooks', {
          url: url.value.trim(),
          events,
          ...(description.value.trim() ? { description: description.value.trim() } : {}),
        }),
      );
      url.value = '';
      description.value = '';
      replaceChildren(
        secretSlot,
        secretOnce(created.secret, {
          ids: { text: 'webhook-secret-once', proceed: 'webhook-secret-done', title: 'webhook-secret-title' },
          title: 'The signing secret — shown once, copy it now',
          explanation:
            'Your receiver verifies each request’s webhook-signature with it (any Standard Webhooks library does). If it is lost, delete the endpoint and add it again.',
          noun: 'secret',
          continueLabel: 'Done, I saved it',
        }),
      );
      await load();
    } catch (error) {
      showError(formError, error);
    }
  });

  thresholdForm.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(thresholdError);
    thresholdStatus.textContent = '';
    try {
      await whileBusy([saveThreshold], 'Saving…', () =>
        api.patch('/console/api/credits', { low_balance_threshold: Number(threshold.value) }),
      );
      thresholdStatus.textContent = 'Saved.';
    } catch (error) {
      showError(thresholdError, error);
    }
  });

  context.root.append(
    pageHeading('Webhooks'),
    h(
      'p',
      { class: 'lead' },
      'Your server hears about sessions, identities and credits as they happen, instead of asking.',
    ),
    form,
    secretSlot,
    listError,
    list,
    deliveries,
    h('h2', null, 'Low balance'),
    thresholdForm,
  );
  const [credits] = await Promise.all([
    api.get<Credits>('/console/api/credits?limit=1').catch(() => undefined),
    load(),
  ]);
  if (credits) threshold.value = String(credits.low_balance_threshold);
};
