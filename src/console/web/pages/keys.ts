// API keys: list, create (the key is shown once), rename and revoke.
import { api } from '../api.ts';
import { confirmAction } from '../confirm-dialog.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { clearError, errorBox, field, showError, whileBusy } from '../forms.ts';
import type { ApiKeySummary, NewApiKey } from '../resources.ts';
import { apiKeyOnce } from '../secret-once.ts';
import { cell, dataTable } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

export const keysPage: Page = async (context) => {
  const name = h('input', {
    id: 'key-name',
    name: 'name',
    required: true,
    maxlength: 100,
    autocomplete: 'off',
    placeholder: 'e.g. Production server',
  });
  const create = h('button', { type: 'submit', id: 'create-key' }, 'Create key');
  const formError = errorBox('key-form-error');
  const newKeySlot = h('div', { id: 'new-key-slot' });
  const listError = errorBox('keys-error');
  const list = h('div', { id: 'keys-list', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const form = h(
    'form',
    { id: 'key-form', class: 'card inline-form' },
    field('Key name', name),
    h('div', { class: 'actions' }, create),
    formError,
  );

  async function load(): Promise<void> {
    try {
      const keys = await api.get<ApiKeySummary[]>('/console/api/keys');
      clearError(listError);
      replaceChildren(list, keys.length ? keysTable(keys) : h('p', { class: 'muted' }, 'No keys yet.'));
    } catch (error) {
      showError(listError, error);
    }
  }

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    clearError(formError);
    try {
      const created = await whileBusy([create], 'Creating…', () =>
        api.post<NewApiKey>('/console/api/keys', { name: name.value.trim() }),
      );
      name.value = '';
      replaceChildren(
        newKeySlot,
        apiKeyOnce(created.api_key, { continueLabel: 'Done, I saved it', onContinue: () => name.focus() }),
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
    const nameCell = cell('Name', key.name ?? h('span', { class: 'muted' }, 'Unnamed key'));
    const rename = h('button', { type: 'button', class: 'secondary small', 'data-testid': 'rename-key' }, 'Rename');
    const revoke = h('button', { type: 'button', class: 'danger small', 'data-testid': 'revoke-key' }, 'Revoke');
    rename.addEventListener('click', () => renameInPlace(key, nameCell));
    revoke.addEventListener('click', async () => {
      if (
        !(await confirmAction(
          `Revoke the key ${key.name ? `“${key.name}” ` : ''}(${key.prefix}…)? Anything using it stops working at once. This cannot be undone.`,
          'Revoke key',
        ))
      )
        return;
      try {
        await whileBusy([revoke, rename], 'Revoking…', () =>
          api.delete(`/console/api/keys/${encodeURIComponent(key.key_id)}`),
        );
        await load();
      } catch (error) {
        showError(listError, error);
      }
    });
    return h(
      'tr',
      { 'data-key-id': key.key_id, class: key.revoked_at ? 'revoked' : null },
      nameCell,
      cell('Key', h('code', null, `${key.prefix}…`)),
      cell('Created', formatDate(key.created_at)),
      cell('Last used', key.last_used_at ? formatDate(key.last_used_at) : 'Never'),
      cell(
        'Revoked',
        key.revoked_at ? h('span', { class: 'badge badge-danger' }, `Revoked ${formatDate(key.revoked_at)}`) : 'No',
      ),
      cell('Actions', key.revoked_at ? null : h('div', { class: 'actions' }, rename, revoke)),
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
      'Keys let your server call the Likeness API. Keep them on the server, never in a web page or app.',
    ),
    form,
    newKeySlot,
    listError,
    list,
  );
  await load();
};
