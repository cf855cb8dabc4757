// Visitors: the people the account's sessions remember (docs/api.md#visitors). The list; one
// visitor's facts by scope (an identity's, or shared by every identity) with when and in which
// session each was learned; an editor whose list replaces every fact (PATCH); and forgetting.
import type { MEMORY_FACT_MAX_CHARS, MEMORY_MAX_FACTS } from '../../../contract/visitor-memory.ts';
import { ApiError, api, type FieldProblem } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { clearError, errorBox, field, onSubmit, select, showError, whileBusy } from '../forms.ts';
import { problemSentence } from '../problems.ts';
import type { IdentityListItem, Visitor, VisitorFact } from '../resources.ts';
import { cell, dataTable, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

// The contract's bounds, typed by its constants (a value import would bundle server code): a
// change there fails the typecheck here.
const MAX_FACTS: typeof MEMORY_MAX_FACTS = 20;
const MAX_FACT_CHARS: typeof MEMORY_FACT_MAX_CHARS = 300;
const PAGE_SIZE = 100;
const SHARED = 'Shared by every identity';

const pathOf = (visitorId: string) => `/console/api/visitors/${encodeURIComponent(visitorId)}`;

/** One fact's controls in the editor; `name`s are unique so a 422 lands at its own row. */
interface FactRow {
  text: HTMLTextAreaElement;
  scope: HTMLSelectElement;
}

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const visitorsPage: Page = async (context) => {
  const listError = errorBox('visitors-error');
  const list = h('div', { id: 'visitors-list', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));
  const more = h(
    'button',
    { type: 'button', id: 'more-visitors', class: 'secondary small', hidden: true },
    'Show more',
  );
  const detail = h('section', { id: 'visitor-detail', class: 'card', hidden: true });
  context.root.append(
    pageHeading('Visitors'),
    h(
      'p',
      { class: 'lead' },
      'The people your identities remember: what was learned of each in their sessions. Correct what is wrong, or forget a person entirely.',
    ),
    listError,
    list,
    more,
    detail,
  );

  const identities = await api.get<IdentityListItem[]>('/console/api/identities').catch(() => [] as IdentityListItem[]);
  const names = new Map(identities.map((identity) => [identity.identity_id, identity.name]));
  const scopeName = (scope: string | null) => (scope === null ? SHARED : (names.get(scope) ?? 'Deleted identity'));

  let visitors: Visitor[] = [];
  let selected: string | null = null;

  async function load(after?: string): Promise<void> {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), ...(after && { after }) });
    try {
      const page = await api.get<Visitor[]>(`/console/api/visitors?${query}`);
      clearError(listError);
      visitors = after ? [...visitors, ...page] : page;
      // A full page may have a next one; an empty extra page just hides the button.
      more.hidden = page.length < PAGE_SIZE;
      renderList();
    } catch (error) {
      showError(listError, error);
    }
  }
  more.addEventListener('click', () => void whileBusy([more], 'Loading…', () => load(visitors.at(-1)?.visitor_id)));

  function renderList(): void {
    replaceChildren(
      list,
      visitors.length
        ? dataTable(
            'visitors-table',
            'Your visitors, newest first; choose one to see what is remembered',
            ['Visitor', 'Facts', 'Last session', 'Created', 'Details'],
            visitors.map(visitorRow),
          )
        : h(
            'p',
            { id: 'visitors-empty', class: 'muted' },
            'No visitors yet. A person is remembered once a session starts with ',
            h('code', null, 'visitor_id'),
            ' (your own id for them): see Visitors in the ',
            h('a', { href: '/docs' }, 'API reference'),
            ' (docs/api.md#visitors).',
          ),
    );
  }

  function visitorRow(visitor: Visitor): HTMLTableRowElement {
    const open = rowButton('Open', 'open-visitor', 'secondary');
    const row = h(
      'tr',
      {
        class: 'clickable',
        'data-visitor-id': visitor.visitor_id,
        'aria-current': visitor.visitor_id === selected ? 'true' : null,
      },
      cell('Visitor', h('code', null, visitor.visitor_id)),
      cell('Facts', String(visitor.facts.length)),
      cell('Last session', formatDate(visitor.last_session_at)),
      cell('Created', formatDate(visitor.created_at)),
      cell('Details', open),
    );
    // The whole row answers a click; the button is the keyboard's way in.
    row.addEventListener('click', () => showVisitor(visitor));
    return row;
  }

  function showVisitor(visitor: Visitor, status?: string): void {
    selected = visitor.visitor_id;
    list.querySelectorAll('tr[data-visitor-id]').forEach((row) => {
      if ((row as HTMLElement).dataset.visitorId === selected) row.setAttribute('aria-current', 'true');
      else row.removeAttribute('aria-current');
    });
    const title = h('h2', { tabindex: -1 }, 'Visitor ', h('code', null, visitor.visitor_id));
    const edit = h('button', { type: 'button', id: 'edit-visitor-facts', class: 'secondary' }, 'Correct facts');
    const forget = h('button', { type: 'button', id: 'forget-visitor', class: 'danger' }, 'Forget this visitor');
    const error = errorBox('visitor-error');
    edit.addEventListener('click', () => replaceChildren(detail, title, editor(visitor)));
    onConfirmedDelete(forget, {
      question: `Forget the visitor ${visitor.visitor_id}? Everything remembered of them is deleted and their sessions no longer name them (the transcripts stay). This cannot be undone.`,
      action: 'Forget visitor',
      path: pathOf(visitor.visitor_id),
      busy: [forget, edit],
      busyLabel: 'Forgetting…',
      errorBox: error,
      done: () => {
        visitors = visitors.filter((known) => known.visitor_id !== visitor.visitor_id);
        selected = null;
        detail.hidden = true;
        replaceChildren(detail);
        renderList();
        context.root.querySelector('h1')?.focus();
      },
    });
    detail.hidden = false;
    replaceChildren(
      detail,
      title,
      h(
        'p',
        { class: 'muted' },
        `First seen ${formatDate(visitor.created_at)} · last session ${formatDate(visitor.last_session_at)} · changed ${formatDate(visitor.updated_at)}`,
      ),
      status ? h('p', { id: 'visitor-status', role: 'status' }, status) : null,
      factsView(visitor.facts),
      h('div', { class: 'actions' }, edit, forget),
      error,
    );
    title.focus();
  }

  /** The facts by scope, each scope in the order its first fact comes (oldest first). */
  function factsView(facts: VisitorFact[]): HTMLElement {
    if (!facts.length)
      return h(
        'p',
        { id: 'visitor-facts', class: 'muted' },
        'Nothing remembered yet: facts are written once a session with this visitor ends.',
      );
    const scopes = [...new Set(facts.map((fact) => fact.identity_id))];
    return h(
      'div',
      { id: 'visitor-facts' },
      ...scopes.map((scope) =>
        h(
          'section',
          { 'data-scope': scope ?? 'shared' },
          h('h3', null, scopeName(scope)),
          h('ul', { class: 'plain-list' }, ...facts.filter((fact) => fact.identity_id === scope).map(factItem)),
        ),
      ),
    );
  }

  // biome-ignore lint/complexity/noExcessiveLinesPerFunction: a form built field by field as it shows, its checks beside each field
  function editor(visitor: Visitor): HTMLFormElement {
    let made = 0;
    const rows: FactRow[] = [];
    const scopes: [string, string][] = [
      ['', SHARED],
      ...identities.map((i): [string, string] => [i.identity_id, i.name]),
    ];
    const fieldset = h('div', { id: 'visitor-facts-rows' });
    const add = h('button', { type: 'button', id: 'add-fact', class: 'secondary' }, 'Add a fact');
    const save = h('button', { type: 'submit', id: 'save-visitor-facts' }, 'Save facts');
    const cancel = h('button', { type: 'button', id: 'cancel-visitor-facts', class: 'secondary' }, 'Cancel');
    const formError = errorBox('visitor-facts-error');
    const form = h(
      'form',
      { id: 'visitor-facts-form' },
      h(
        'p',
        { class: 'hint' },
        `What you save replaces every fact; the next session reads it. At most ${MAX_FACTS} facts per identity and ${MAX_FACTS} shared, each up to ${MAX_FACT_CHARS} characters. A fact left as it was keeps when and where it was learned.`,
      ),
      fieldset,
      h('div', { class: 'actions' }, add, save, cancel),
      formError,
    );

    function addRow(text: string, scope: string | null): FactRow {
      const n = made++;
      const input = h('textarea', {
        id: `fact-text-${n}`,
        name: `fact-text-${n}`,
        required: true,
        maxlength: MAX_FACT_CHARS,
        rows: 2,
      });
      input.value = text;
      // A deleted identity's facts keep their scope until moved (the save then says so).
      const options =
        scope && !names.has(scope) ? [...scopes, [scope, 'Deleted identity'] as [string, string]] : scopes;
      const scopeSelect = select(`fact-scope-${n}`, `fact-scope-${n}`, options, scope ?? '');
      const remove = rowButton('Remove', 'remove-fact', 'danger');
      const row = h(
        'fieldset',
        { class: 'attachment-group', 'data-testid': 'fact-row' },
        h('legend', null, 'Fact'),
        field('Text', input),
        field('Remembered by', scopeSelect),
        h('p', { class: 'actions' }, remove),
      );
      const entry: FactRow = { text: input, scope: scopeSelect };
      remove.addEventListener('click', () => {
        rows.splice(rows.indexOf(entry), 1);
        row.remove();
        add.focus();
      });
      rows.push(entry);
      fieldset.append(row);
      return entry;
    }

    for (const fact of visitor.facts) addRow(fact.text, fact.identity_id);
    add.addEventListener('click', () => addRow('', null).text.focus());
    cancel.addEventListener('click', () => showVisitor(visitor));
    onSubmit(
      form,
      formError,
      async () => {
        const facts = rows.map((row) => ({ text: row.text.value.trim(), identity_id: row.scope.value || null }));
        const saved = await whileBusy([save, add, cancel], 'Saving…', () =>
          api.patch<Visitor>(pathOf(visitor.visitor_id), { facts }),
        );
        // The list's copy too: its fact count changed.
        visitors = visitors.map((known) => (known.visitor_id === saved.visitor_id ? saved : known));
        renderList();
        showVisitor(saved, 'Saved: the next session reads these facts.');
      },
      (caught) => atFactRows(caught, rows, scopeName),
    );
    return form;
  }

  await load();
};

/** A fact, and on the line under it when and where it was learned. */
function factItem(fact: VisitorFact): HTMLLIElement {
  const learned = fact.session_id
    ? [`Learned ${formatDate(fact.learned_at)} in session `, h('code', null, fact.session_id)]
    : `Written ${formatDate(fact.learned_at)} by a correction, not in a session`;
  return h(
    'li',
    { 'data-testid': 'visitor-fact', 'data-session-id': fact.session_id },
    h(
      'p',
      null,
      h('span', { 'data-testid': 'fact-text' }, fact.text),
      h('br'),
      h('small', { class: 'muted' }, learned),
    ),
  );
}

/**
 * A problem about `["body","facts",3,"text"]` is said next to the fourth row's text (its scope
 * select for `identity_id`), in the editor's words; showFieldProblems matches controls by name.
 */
function atFactRows(error: unknown, rows: FactRow[], scopeName: (scope: string | null) => string): unknown {
  if (!(error instanceof ApiError) || !error.problems.length) return error;
  const problems = error.problems.map((problem): FieldProblem => {
    const [where, list, index, name] = problem.loc;
    const row = where === 'body' && list === 'facts' ? rows[Number(index)] : undefined;
    if (!row) return problem;
    const control = name === 'identity_id' ? row.scope : row.text;
    const scope = row.scope.value || null;
    let sentence: string;
    if (problem.type === 'too_many_facts')
      sentence = `${scopeName(scope)} has more than ${MAX_FACTS} facts: remove some or move them to another scope.`;
    else if (problem.type === 'unknown_identity') sentence = 'That identity no longer exists: choose another scope.';
    else if (problem.type === 'string_too_short') sentence = 'The fact is empty: write it, or remove it.';
    else sentence = problemSentence({ ...problem, loc: ['body', 'fact'] });
    return { loc: ['body', control.name], msg: `Fact ${Number(index) + 1}: ${sentence}`, type: 'fact_problem' };
  });
  return new ApiError(error.status, [...new Set(problems.map(problemSentence))].join(' '), problems);
}
