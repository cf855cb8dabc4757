// Tools: what an identity's agent may call in a conversation (docs/api.md#tools). Add one (a
// webhook tool's signing secret is shown once), see the account's tools, delete one; identities
// pick theirs on the Identities page (identity-attachments.ts).
import { ApiError, api, type FieldProblem } from '../api.ts';
import { onConfirmedDelete } from '../confirmed-delete.ts';
import { h, replaceChildren } from '../dom.ts';
import { formatDate } from '../format.ts';
import { errorBox, field, onSubmit, select, whileBusy } from '../forms.ts';
import { listLoad } from '../list-load.ts';
import { problemSentence } from '../problems.ts';
import type { CreatedTool, Tool, ToolType } from '../resources.ts';
import { secretOnce } from '../secret-once.ts';
import { cell, dataTable, rowButton } from '../table.ts';
import { type Page, pageHeading } from './page.ts';

export const TOOL_TYPE_NAMES: Record<ToolType, string> = {
  webhook: 'Webhook: your server answers',
  client: "Client: the visitor's app answers (LiveKit RPC)",
  end_session: 'End session: the agent says goodbye and hangs up',
};
const TOOL_TYPES = Object.keys(TOOL_TYPE_NAMES) as ToolType[];

/** What the parameters field starts with, per type: a small schema worth editing. */
const EXAMPLE_PARAMETERS: Record<ToolType, object> = {
  webhook: {
    type: 'object',
    properties: { date: { type: 'string', description: 'YYYY-MM-DD' } },
    required: ['date'],
  },
  client: {
    type: 'object',
    properties: { url: { type: 'string', description: 'The page to show the visitor' } },
    required: ['url'],
  },
  end_session: { type: 'object', properties: {} },
};
const exampleText = (type: ToolType) => JSON.stringify(EXAMPLE_PARAMETERS[type], null, 2);

// biome-ignore lint/complexity/noExcessiveLinesPerFunction: a page built top to bottom as it shows, each handler beside the element it serves
export const toolsPage: Page = async (context) => {
  const name = h('input', {
    id: 'tool-name',
    name: 'name',
    required: true,
    maxlength: 64,
    pattern: '[a-z][a-z0-9_]{0,63}',
    autocomplete: 'off',
    spellcheck: false,
    placeholder: 'check_availability',
  });
  const type = select(
    'tool-type',
    'type',
    TOOL_TYPES.map((value) => [value, TOOL_TYPE_NAMES[value]]),
    'webhook',
  );
  const description = h('textarea', {
    id: 'tool-description',
    name: 'description',
    required: true,
    maxlength: 1000,
    rows: 2,
    placeholder: 'Checks which tables are free on a date. Use it before promising a booking.',
  });
  const parameters = h(
    'textarea',
    { id: 'tool-parameters', name: 'parameters', rows: 8, spellcheck: false, class: 'code' },
    exampleText('webhook'),
  );
  const url = h('input', {
    id: 'tool-url',
    name: 'url',
    type: 'url',
    maxlength: 2000,
    autocomplete: 'off',
    placeholder: 'https://example.com/likeness/tools/check_availability',
  });
  const timeout = h('input', {
    id: 'tool-timeout',
    name: 'timeout_ms',
    type: 'number',
    min: 1,
    max: 10000,
    step: 1,
    placeholder: '5000',
  });
  const parametersField = field(
    'Parameters (JSON Schema)',
    parameters,
    'An object schema: what the model passes when it calls the tool. Describe each property; the model reads the descriptions.',
  );
  const webhookFields = h(
    'div',
    { id: 'tool-webhook-fields' },
    field(
      'Webhook URL',
      url,
      'Each call is POSTed here as JSON, signed with the secret shown after adding; the answer goes back to the model.',
    ),
  );
  // A client tool's RPC waits for the visitor's app as long.
  const timeoutField = field(
    'Timeout (milliseconds, optional)',
    timeout,
    'How long an answer may take: at most 10,000; 5,000 when left empty.',
  );
  const add = h('button', { type: 'submit', id: 'add-tool' }, 'Add tool');
  const formError = errorBox('tool-form-error');
  const form = h(
    'form',
    { id: 'tool-form', class: 'card' },
    field(
      'Name',
      name,
      'What the model calls: lowercase letters, digits and _, starting with a letter. A client tool’s name is the RPC method your app registers.',
    ),
    field('Type', type),
    field('Description', description, 'What it does and when to call it, for the model. Optional for end session.'),
    parametersField,
    webhookFields,
    timeoutField,
    h('div', { class: 'actions' }, add),
    formError,
  );
  const secretSlot = h('div', { id: 'tool-secret-slot' });
  const listError = errorBox('tools-error');
  const list = h('div', { id: 'tools-list', 'aria-live': 'polite' }, h('p', { class: 'muted' }, 'Loading…'));

  /** Only what the chosen type uses is shown (and sent). */
  let shownType = type.value as ToolType;
  function showTypeFields(): void {
    const chosen = type.value as ToolType;
    webhookFields.hidden = chosen !== 'webhook';
    url.required = chosen === 'webhook';
    parametersField.hidden = chosen === 'end_session';
    timeoutField.hidden = chosen === 'end_session';
    description.required = chosen !== 'end_session';
    // An untouched example follows the type; anything typed stays.
    if (parameters.value.trim() === '' || parameters.value === exampleText(shownType))
      parameters.value = exampleText(chosen);
    shownType = chosen;
  }
  type.addEventListener('change', showTypeFields);

  const load = listLoad<Tool[]>('/console/api/tools', listError, (data) =>
    replaceChildren(
      list,
      data.length
        ? dataTable('tools-table', 'Your tools', ['Name', 'Type', 'Calls', 'Created', 'Actions'], data.map(toolRow))
        : h('p', { class: 'muted' }, 'No tools yet.'),
    ),
  );

  function toolRow(tool: Tool): HTMLTableRowElement {
    const remove = rowButton('Delete', 'delete-tool', 'danger');
    onConfirmedDelete(remove, {
      question: `Delete the tool ${tool.name}? Identities that use it stop offering it from their next session.`,
      action: 'Delete tool',
      path: `/console/api/tools/${encodeURIComponent(tool.tool_id)}`,
      busy: [remove],
      errorBox: listError,
      done: load,
    });
    return h(
      'tr',
      { 'data-tool-id': tool.tool_id, 'data-type': tool.type },
      cell('Name', h('code', null, tool.name), h('div', { class: 'muted' }, tool.description)),
      cell('Type', h('span', { class: 'badge' }, tool.type.replace('_', ' '))),
      cell('Calls', callsOf(tool)),
      cell('Created', formatDate(tool.created_at)),
      cell('Actions', h('div', { class: 'actions' }, remove)),
    );
  }

  onSubmit(
    form,
    formError,
    async () => {
      const chosen = type.value as ToolType;
      const body: Record<string, unknown> = {
        name: name.value.trim(),
        type: chosen,
      };
      if (description.value.trim()) body.description = description.value.trim();
      if (chosen !== 'end_session') {
        const schema = parsedParameters(parameters.value);
        if (schema instanceof ApiError) throw schema;
        body.parameters = schema;
      }
      if (chosen === 'webhook') body.url = url.value.trim();
      if (chosen !== 'end_session' && timeout.value.trim()) body.timeout_ms = Number(timeout.value);
      const created = await whileBusy([add], 'Adding…', () => api.post<CreatedTool>('/console/api/tools', body));
      form.reset();
      // The next tool is often of the same type: it stays chosen, its example back in place.
      type.value = chosen;
      parameters.value = exampleText(chosen);
      showTypeFields();
      if (created.secret) replaceChildren(secretSlot, secretShownOnce(created.secret));
      await load();
    },
    atParametersField,
  );

  showTypeFields();
  context.root.append(
    pageHeading('Tools'),
    h(
      'p',
      { class: 'lead' },
      'Things an identity can do in a conversation besides talking: ask your server, ask the visitor’s app, or end the session. Choose each identity’s tools on the Identities page.',
    ),
    form,
    secretSlot,
    listError,
    list,
  );
  await load();
};

/** What a call does, for the list. */
function callsOf(tool: Tool): HTMLElement {
  switch (tool.type) {
    case 'webhook':
      return h(
        'div',
        null,
        h('code', { class: 'reference' }, tool.url ?? ''),
        h('div', { class: 'muted' }, `Answers within ${tool.timeout_ms.toLocaleString()} ms`),
      );
    case 'client':
      return h(
        'div',
        null,
        'The visitor’s app: RPC method ',
        h('code', null, tool.name),
        h('div', { class: 'muted' }, `Answers within ${tool.timeout_ms.toLocaleString()} ms`),
      );
    default:
      return h('div', null, 'Ends the session');
  }
}

/** The schema typed, or a problem at the field the way a 422 would put it. */
function parsedParameters(text: string): Record<string, unknown> | ApiError {
  const problem = (msg: string) => new ApiError(422, msg, [{ loc: ['body', 'parameters'], msg, type: 'json_invalid' }]);
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return problem(`The parameters are not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return problem('The parameters must be a JSON object: a schema such as {"type": "object", "properties": {}}.');
  return value as Record<string, unknown>;
}

/**
 * A problem inside the schema (`["body","parameters","properties","when","type"]`) belongs next
 * to the parameters field, saying where in the schema it is; the field is matched by the loc's
 * last name otherwise, which would be the Type select.
 */
function atParametersField(error: unknown): unknown {
  if (!(error instanceof ApiError)) return error;
  const inSchema = (loc: FieldProblem['loc']) => loc[0] === 'body' && loc[1] === 'parameters' && loc.length > 2;
  if (!error.problems.some((p) => inSchema(p.loc))) return error;
  const problems = error.problems.map((p) =>
    inSchema(p.loc)
      ? { ...p, loc: ['body', 'parameters'], msg: `In the schema at ${p.loc.slice(2).join('.')}: ${p.msg}` }
      : p,
  );
  return new ApiError(error.status, [...new Set(problems.map(problemSentence))].join(' '), problems);
}

function secretShownOnce(secret: string): HTMLElement {
  return secretOnce(secret, {
    ids: { text: 'tool-secret-once', proceed: 'tool-secret-done', title: 'tool-secret-title' },
    title: 'The tool’s signing secret — shown once, copy it now',
    explanation:
      'Your server verifies each call’s webhook-signature with it (any Standard Webhooks library does). If it is lost, delete the tool and add it again.',
    noun: 'secret',
    continueLabel: 'Done, I saved it',
  });
}
