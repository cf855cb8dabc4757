// Embed: publishable keys (`lk_pub_…`, docs/api.md#publishable-keys), with which a website's
// pages start sessions of chosen identities, from chosen origins, within limits. Make one, edit
// its origins, identities and limits, revoke it; each live key shows the snippet to paste, as
// the <likeness-avatar> element or as an iframe. The key is public by design: shown in full.
import { ApiError, api, type FieldProblem } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { checkboxField, errorBox, field, onSubmit, showError, whileBusy } from '../forms.ts';
import { listLoad } from '../list-load.ts';
import type { IdentityListItem, PublishableKey, PublishableKeyLimits } from '../resources.ts';
import { cell, dataTable, keyCells, rowButton } from '../table.ts';
import { snippetCard } from './embed-snippets.ts';
import { type Page, pageHeading } from './page.ts';

type LimitName = keyof PublishableKeyLimits;
/**
 * The limits as the form names them, with the server's defaults (DEFAULT_PUBLISHABLE_KEY_LIMITS
 * in src/publishable-keys/contract.ts, which the bundle cannot import: it pulls in Elysia). The
 * Chromium suite checks that the two agree.
 */
const LIMITS: { name: LimitName; label: string; fallback: number }[] = [
  { name: 'sessions_per_minute', label: 'Sessions started per minute', fallback: 10 },
  { name: 'concurrent_sessions', label: 'Sessions at once', fallback: 5 },
  { name: 'visitor_sessions_per_minute', label: 'Per visitor: sessions started per minute', fallback: 3 },
  { name: 'visitor_concurrent_sessions', label: 'Per visitor: sessions at once', fallback: 1 },
];

/** A key's fields, as the create form and the editor both show them. */
interface KeyFields {
  elements: HTMLElement[];
  /** The request body: an empty name or limit is left out (a new key: the default; an edit: unchanged). */
  body(): Record<string, unknown>;
  focus(): void;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const embedPage: Page = async (context) => {
  let identities: IdentityListItem[] = [];
  const formSlot = h('div', null, h('p', { class: 'muted' }, 'Loading…'));
  const editorSlot = h('div', { id: 'publishable-key-editor' });
  const listError = errorBox('publishable-keys-error');
  const list = h('div', { id: 'publishable-keys-list', 'aria-live': 'polite' });
  const snippets = h('div', { id: 'publishable-key-snippets' });

  const identityName = (id: string) => identities.find((i) => i.identity_id === id)?.name;

  const load = listLoad<PublishableKey[]>('/console/api/publishable-keys', listError, (keys) => {
    replaceChildren(
      list,
      keys.length
        ? dataTable(
            'publishable-keys-table',
            'Your publishable keys',
            ['Name', 'Key', 'Origins', 'Identities', 'Limits', 'Last used', 'Revoked', 'Actions'],
            keys.map(keyRow),
          )
        : h('p', { class: 'muted' }, 'No publishable keys yet.'),
    );
    const live = keys.filter((key) => !key.revoked_at);
    replaceChildren(
      snippets,
      live.length ? h('h2', null, 'Put it on your page') : null,
      live.map((key) => snippetCard(key, identityName)),
    );
  });

  function keyRow(key: PublishableKey): HTMLTableRowElement {
    const edit = rowButton('Edit', 'edit-publishable-key', 'secondary');
    const revoke = rowButton('Revoke', 'revoke-publishable-key', 'danger');
    edit.addEventListener('click', () => openEditor(key));
    const named = key.name ? `“${key.name}” ` : '';
    onConfirmedDelete(revoke, {
      question: `Revoke the publishable key ${named}(${key.publishable_key})? Pages using it can no longer start sessions; sessions running now go on. This cannot be undone.`,
      action: 'Revoke key',
      path: `/console/api/publishable-keys/${encodeURIComponent(key.publishable_key_id)}`,
      busy: [revoke, edit],
      busyLabel: 'Revoking…',
      errorBox: listError,
      done: () => {
        replaceChildren(editorSlot);
        return load();
      },
    });
    return h(
      'tr',
      {
        'data-publishable-key-id': key.publishable_key_id,
        'data-revoked': String(Boolean(key.revoked_at)),
        class: key.revoked_at ? 'revoked' : null,
      },
      cell(
        'Name',
        h(
          'span',
          null,
          key.name ?? h('span', { class: 'muted' }, 'Unnamed key'),
          key.test && ' ',
          key.test && h('span', { class: 'badge badge-test' }, 'Test'),
        ),
      ),
      cell('Key', h('code', { class: 'reference', 'data-testid': 'publishable-key' }, key.publishable_key)),
      cell(
        'Origins',
        h('ul', { class: 'plain-list' }, ...key.allowed_origins.map((o) => h('li', null, h('code', null, o)))),
      ),
      cell(
        'Identities',
        h(
          'ul',
          { class: 'plain-list' },
          ...key.identity_ids.map((id) =>
            h('li', { 'data-identity-id': id }, identityName(id) ?? h('code', { class: 'muted' }, `${id} (deleted)`)),
          ),
        ),
      ),
      cell('Limits', limitsText(key.limits)),
      ...keyCells(key, [edit, revoke]),
    );
  }

  const createForm = (): HTMLFormElement =>
    keyForm({
      prefix: 'publishable-key',
      title: 'New publishable key',
      fields: keyFields('publishable-key', identities),
      buttons: [h('button', { type: 'submit', id: 'create-publishable-key' }, 'Create publishable key')],
      busyLabel: 'Creating…',
      send: (body) => api.post('/console/api/publishable-keys', body),
      done: async () => {
        replaceChildren(formSlot, createForm());
        await load();
      },
    });

  function openEditor(key: PublishableKey): void {
    const fields = keyFields('edit-publishable-key', identities, key);
    const cancel = h('button', { type: 'button', id: 'cancel-publishable-key-edit', class: 'secondary' }, 'Cancel');
    cancel.addEventListener('click', () => replaceChildren(editorSlot));
    const form = keyForm({
      prefix: 'edit-publishable-key',
      title: `Edit ${key.name ?? key.publishable_key}`,
      fields,
      buttons: [h('button', { type: 'submit', id: 'save-publishable-key' }, 'Save'), cancel],
      busyLabel: 'Saving…',
      send: (body) => api.patch(`/console/api/publishable-keys/${encodeURIComponent(key.publishable_key_id)}`, body),
      done: async () => {
        replaceChildren(editorSlot);
        await load();
      },
    });
    replaceChildren(editorSlot, form);
    form.scrollIntoView({ block: 'nearest' });
    fields.focus();
  }

  context.root.append(
    pageHeading('Embed'),
    h(
      'p',
      { class: 'lead' },
      'Put an identity on your website. A publishable key starts sessions only from your site’s pages, only of the identities you choose, within limits, and reads nothing: it is public by design. Sessions are charged to this account.',
    ),
    formSlot,
    editorSlot,
    listError,
    list,
    snippets,
  );
  try {
    identities = await api.get<IdentityListItem[]>('/console/api/identities');
  } catch (error) {
    showError(listError, error);
  }
  replaceChildren(formSlot, createForm());
  await load();
};

/** The create form or the editor: `#<prefix>-form`, its error box `#<prefix>-form-error`. */
function keyForm(options: {
  prefix: string;
  title: string;
  fields: KeyFields;
  /** The submit button first. */
  buttons: HTMLButtonElement[];
  busyLabel: string;
  send: (body: Record<string, unknown>) => Promise<unknown>;
  done: () => Promise<void>;
}): HTMLFormElement {
  const error = errorBox(`${options.prefix}-form-error`);
  // The server says what is wrong (origins, limits), next to the field: no browser bubbles.
  const form = h(
    'form',
    { id: `${options.prefix}-form`, class: 'card', novalidate: true },
    h('h2', null, options.title),
    ...options.fields.elements,
    h('div', { class: 'actions' }, ...options.buttons),
    error,
  );
  onSubmit(
    form,
    error,
    async () => {
      await whileBusy(options.buttons, options.busyLabel, () => options.send(options.fields.body()));
      await options.done();
    },
    atFields,
  );
  return form;
}

/** Name, origins (one a line), identities (the ready ones, and any the key has) and the four limits. */
// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a form built field by field as it shows, its checks beside each field
function keyFields(prefix: string, identities: IdentityListItem[], key?: PublishableKey): KeyFields {
  const name = h('input', {
    id: `${prefix}-name`,
    name: 'name',
    maxlength: 100,
    autocomplete: 'off',
    placeholder: 'e.g. Shop website',
    value: key?.name ?? '',
  });
  const origins = h(
    'textarea',
    {
      id: `${prefix}-origins`,
      name: 'allowed_origins',
      rows: 3,
      spellcheck: false,
      autocomplete: 'off',
      placeholder: 'https://shop.example\nhttps://www.shop.example',
    },
    key?.allowed_origins.join('\n') ?? '',
  );
  const has = new Set(key?.identity_ids ?? []);
  const offered = [
    ...identities
      .filter((i) => i.status === 'ready' || has.has(i.identity_id))
      .map((i) => ({
        id: i.identity_id,
        label: i.status === 'ready' ? i.name : `${i.name} (${i.status})`,
      })),
    // Deleted since: kept while checked, so an edit does not drop it unasked.
    ...[...has]
      .filter((id) => !identities.some((i) => i.identity_id === id))
      .map((id) => ({ id, label: `${id} (deleted)` })),
  ];
  // An edit keeps the key's order (its snippets start with the first); added ones go last.
  const before = [...has];
  const place = (id: string) => (has.has(id) ? before.indexOf(id) : before.length);
  const byKeyOrder = (a: string, b: string) => place(a) - place(b);
  const boxes = offered.map(({ id, label }) => ({
    label,
    box: h('input', { type: 'checkbox', id: `${prefix}-identity-${id}`, value: id, checked: has.has(id) }),
  }));
  const identityGroup = h(
    'fieldset',
    { id: `${prefix}-identities`, name: 'identity_ids', class: 'attachment-group' },
    h('legend', null, 'Identities it may start'),
    boxes.length
      ? boxes.map(({ label, box }) => checkboxField(label, box))
      : h(
          'p',
          { class: 'muted' },
          'No ready identities yet: create one on the ',
          h('a', { href: '#/identities' }, 'Identities page'),
          '.',
        ),
  );
  const limits = LIMITS.map((limit) =>
    h('input', {
      id: `${prefix}-${limit.name.replace(/_/g, '-')}`,
      name: limit.name,
      type: 'number',
      min: 1,
      max: 10000,
      step: 1,
      placeholder: String(limit.fallback),
      value: key ? String(key.limits[limit.name]) : '',
    }),
  );
  const limitGroup = h(
    'fieldset',
    { id: `${prefix}-limits`, class: 'attachment-group limits' },
    h('legend', null, 'Limits'),
    h('p', { class: 'hint' }, 'Empty: the default shown. A visitor is told apart by their network address.'),
    ...limits.map((input, i) => field(`${LIMITS[i]!.label} (default ${LIMITS[i]!.fallback})`, input)),
  );
  return {
    elements: [
      field('Name (optional)', name),
      field(
        'Allowed origins, one a line',
        origins,
        'The exact origins of the pages that may use it: scheme, host and port if not the usual one, no path (https://shop.example).',
      ),
      identityGroup,
      limitGroup,
    ],
    body() {
      const body: Record<string, unknown> = {
        allowed_origins: origins.value
          .split('\n')
          .map((line) => line.trim())
          .filter(Boolean),
        identity_ids: boxes
          .filter((b) => b.box.checked)
          .map((b) => b.box.value)
          .sort(byKeyOrder),
      };
      if (name.value.trim()) body.name = name.value.trim();
      const chosen = Object.fromEntries(
        limits.flatMap((input, i) => (input.value.trim() ? [[LIMITS[i]!.name, Number(input.value)]] : [])),
      );
      if (Object.keys(chosen).length) body.limits = chosen;
      return body;
    },
    focus: () => origins.focus(),
  };
}

function limitsText(limits: PublishableKeyLimits): HTMLElement {
  return h(
    'div',
    null,
    `${limits.sessions_per_minute} a minute, ${limits.concurrent_sessions} at once`,
    h(
      'div',
      { class: 'muted' },
      `Per visitor: ${limits.visitor_sessions_per_minute} a minute, ${limits.visitor_concurrent_sessions} at once`,
    ),
  );
}

/**
 * An origin or identity problem is located at its entry (`["body","allowed_origins",1]`); the
 * forms match a problem to a control by the loc's last name, so it moves to the field, one note
 * per field.
 */
function atFields(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const byField = new Map<string, FieldProblem>();
  const rest: FieldProblem[] = [];
  for (const problem of error.problems) {
    const [where, name, index] = problem.loc;
    if (where !== 'body' || (name !== 'allowed_origins' && name !== 'identity_ids') || typeof index !== 'number') {
      rest.push(problem);
      continue;
    }
    const before = byField.get(name);
    byField.set(
      name,
      before ? { ...before, msg: `${before.msg}; ${problem.msg}` } : { ...problem, loc: ['body', name] },
    );
  }
  return new ApiError(error.status, error.message, [...byField.values(), ...rest]);
}
