// API keys: list, create (the key is shown once), rename and revoke. A test key (`lk_test_…`,
// docs/api.md#test-mode) reaches the account's test account: it is made here and badged "Test".
import { api } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { checkboxField, clearError, errorBox, field, showError, whileBusy } from '../forms.ts';
import { listLoad } from '../list-load.ts';
import type { ApiKeySummary, NewApiKey } from '../resources.ts';
import { apiKeyOnce } from '../secret-once.ts';
import { cell, dataTable, keyCells, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const keysPage: Page = async (context) => {
  const name = h('input', {
    id: 'key-name',
    name: 'name',
    required: true,
    maxlength: 100,
    autocomplete: 'off',
    placeholder: 'e.g. Production server',
  });
  const test = h('input', { type: 'checkbox', id: 'key-test', name: 'test' });
  const create = h('button', { type: 'submit', id: 'create-key' }, 'Create key');
  const formError = errorBox('key-form-error');
  const newKeySlot = h('div', { id: 'new-key-slot' });
  const listError = errorBox('keys-error');
  const list = h('div', { id: 'keys-list', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const form = h(
    'form',
    { id: 'key-form', class: 'card inline-form' },
    field('Key name', name),
    checkboxField(
      'Test key',
      test,
      'Test keys cost nothing: their sessions are short and marked TEST, and they see only test resources (identities, sessions… made with a test key).',
    ),
    h('div', { class: 'actions' }, create),
    formError,
  );

  const load = listLoad<ApiKeySummary[]>('/console/api/keys', listError, (keys) =>
    replaceChildren(list, keys.length ? keysTable(keys) : h('p', { class: 'muted' }, 'No keys yet.')),
  );

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(formError);
    try {
      const created = await whileBusy([create], 'Creating…', () =>
        api.post<NewApiKey>('/console/api/keys', { name: name.value.trim(), ...(test.checked && { test: true }) }),
      );
      name.value = '';
      test.checked = false;
      replaceChildren(
        newKeySlot,
        newKeyOnce(created, () => name.focus()),
      );
      await load();
    } catch (error) {
      showError(formError, error);
    }
  });

  function keysTable(keys: ApiKeySummary[]): HTMLTableElement {
    return dataTable(
      'keys-table',
      'Your API keys',
      ['Name', 'Key', 'Created', 'Last used', 'Revoked', 'Actions'],
      keys.map(keyRow),
    );
  }

  function keyRow(key: ApiKeySummary): HTMLTableRowElement {
    const nameCell = cell(
      'Name',
      // One element, so the badge stays beside the name in the phone's stacked rows.
      h(
        'span',
        null,
        key.name ?? h('span', { class: 'muted' }, 'Unnamed key'),
        key.test && ' ',
        key.test && testBadge(),
      ),
    );
    const rename = rowButton('Rename', 'rename-key', 'secondary');
    const revoke = rowButton('Revoke', 'revoke-key', 'danger');
    rename.addEventListener('click', () => renameInPlace(key, nameCell));
    onConfirmedDelete(revoke, {
      question: `Revoke the key ${key.name ? `“${key.name}” ` : ''}(${key.prefix}…)? Anything using it stops working at once. This cannot be undone.`,
      action: 'Revoke key',
      path: `/console/api/keys/${encodeURIComponent(key.key_id)}`,
      busy: [revoke, rename],
      busyLabel: 'Revoking…',
      errorBox: listError,
      done: load,
    });
    return h(
      'tr',
      { 'data-key-id': key.key_id, 'data-test': String(key.test), class: key.revoked_at ? 'revoked' : null },
      nameCell,
      cell('Key', h('code', null, `${key.prefix}…`)),
      cell('Created', formatDate(key.created_at)),
      ...keyCells(key, [rename, revoke]),
    );
  }

  function renameInPlace(key: ApiKeySummary, nameCell: HTMLTableCellElement): void {
    const inputId = `rename-${key.key_id}`;
    const input = h('input', {
      id: inputId,
      name: 'name',
      value: key.name ?? '',
      required: true,
      maxlength: 100,
      'data-testid': 'rename-key-input',
    });
    const save = h('button', { type: 'submit', class: 'small' }, 'Save');
    const cancel = h('button', { type: 'button', class: 'secondary small' }, 'Cancel');
    const error = errorBox(`${inputId}-error`);
    const form = h(
      'form',
      { class: 'rename-form', 'data-testid': 'rename-key-form' },
      h('label', { for: inputId, class: 'visually-hidden' }, `New name for ${key.name ?? `key ${key.prefix}…`}`),
      input,
      h('div', { class: 'actions' }, save, cancel),
      error,
    );
    cancel.addEventListener('click', () => void load());
    form.addEventListener('submit', async (event) => {
      event.preventDefault();
      try {
        await whileBusy([save, cancel], 'Saving…', () =>
          api.patch(`/console/api/keys/${encodeURIComponent(key.key_id)}`, { name: input.value.trim() }),
        );
        await load();
      } catch (caught) {
        showError(error, caught);
      }
    });
    replaceChildren(nameCell, form);
    input.select();
  }

  context.root.append(
    pageHeading('API keys'),
    h(
      'p',
      { class: 'lead' },
      'Keys let your server call the Likeness API. Keep them on the server, never in a web page or app: a web page starts sessions with a publishable key, made on the ',
      h('a', { href: '#/embed' }, 'Embed page'),
      '.',
    ),
    form,
    newKeySlot,
    listError,
    list,
  );
  await load();
};

/** Marks a test key, in the list and in the box that shows it once. */
function testBadge(): HTMLElement {
  return h('span', { class: 'badge badge-test', 'data-testid': 'test-key-badge', title: 'A test key' }, 'Test');
}

/** The new key, shown once; a test key says so before its text. */
function newKeyOnce(created: NewApiKey, onContinue: () => void): HTMLElement {
  const box = apiKeyOnce(created.api_key, { continueLabel: 'Done, I saved it', onContinue });
  if (created.test) {
    box.setAttribute('data-test', 'true');
    box
      .querySelector('h2')
      ?.after(
        h(
          'p',
          { id: 'api-key-once-test', class: 'test-key-note' },
          testBadge(),
          ' This is a test key: it costs nothing, its sessions are short and marked TEST, and it sees only test resources.',
        ),
      );
  }
  return box;
}
