// An identity's tools and documents (its `tool_ids` and `document_ids`): checkboxes listing the
// account's tools and its ready or processing documents, in the create form and the editor.
// The API takes each list as a JSON array string in the multipart form.
import { api } from '../api.ts';
import { h } from '../dom.ts';
import { checkboxField } from '../forms.ts';
import type { Identity, IdentityListItem, KnowledgeDocument, Tool } from '../resources.ts';

/** What an identity may be given. */
export interface Attachables {
  /** Null when the list could not be read: the identity's own stays as it is. */
  tools: Tool[] | null;
  documents: KnowledgeDocument[] | null;
}

/** The ids an identity has (none for a new one). */
export interface Attached {
  tool_ids: string[];
  document_ids: string[];
}

export interface AttachmentPicker {
  element: HTMLElement;
  /** Puts `tool_ids` and `document_ids` in the form when they differ from `before` (a new identity: from none). */
  addTo(body: FormData, before?: Attached): void;
}

export async function loadAttachables(): Promise<Attachables> {
  const [tools, documents] = await Promise.allSettled([
    api.get<Tool[]>('/console/api/tools'),
    api.get<KnowledgeDocument[]>('/console/api/documents'),
  ]);
  return {
    tools: tools.status === 'fulfilled' ? tools.value : null,
    documents: documents.status === 'fulfilled' ? documents.value : null,
  };
}

export function attachedOf(identity: Identity): Attached {
  return { tool_ids: identity.tool_ids, document_ids: identity.document_ids };
}

/** `prefix` names the controls: `identity` in the create form, `edit-identity` in the editor. */
export function attachmentPicker(
  prefix: string,
  attachables: Attachables,
  attached: Attached = { tool_ids: [], document_ids: [] },
): AttachmentPicker {
  const toolBoxes = (attachables.tools ?? []).map((tool) => ({
    label: `${tool.name} (${tool.type.replace('_', ' ')})`,
    box: checkbox(`${prefix}-tool-${tool.tool_id}`, 'tool_ids', tool.tool_id, attached.tool_ids),
  }));
  // A failed document answers nothing: offered only while the identity still has it.
  const documentBoxes = (attachables.documents ?? [])
    .filter((d) => d.status !== 'failed' || attached.document_ids.includes(d.document_id))
    .map((d) => ({
      label: d.status === 'ready' ? d.name : `${d.name} (${d.status})`,
      box: checkbox(`${prefix}-document-${d.document_id}`, 'document_ids', d.document_id, attached.document_ids),
    }));
  const element = h(
    'div',
    { class: 'attachments' },
    group(`${prefix}-tools`, 'Tools', attachables.tools && toolBoxes, [
      'No tools yet: add them on the ',
      '#/tools',
      'Tools page',
    ]),
    group(`${prefix}-documents`, 'Knowledge', attachables.documents && documentBoxes, [
      'No documents ready yet: upload them on the ',
      '#/knowledge',
      'Knowledge page',
    ]),
  );
  const chosen = (boxes: { box: HTMLInputElement }[]) => boxes.filter((b) => b.box.checked).map((b) => b.box.value);
  return {
    element,
    addTo(body, before = { tool_ids: [], document_ids: [] }) {
      const tools = chosen(toolBoxes);
      const documents = chosen(documentBoxes);
      if (attachables.tools && !sameSet(tools, before.tool_ids)) body.set('tool_ids', JSON.stringify(tools));
      if (attachables.documents && !sameSet(documents, before.document_ids))
        body.set('document_ids', JSON.stringify(documents));
    },
  };
}

/** On the identity's card: `2 tools · 1 document`, nothing when it has neither. */
export function attachmentsSummary(identity: IdentityListItem): HTMLParagraphElement | null {
  const count = (n: number, noun: string) => (n ? `${n} ${noun}${n === 1 ? '' : 's'}` : '');
  const text = [count(identity.tool_ids.length, 'tool'), count(identity.document_ids.length, 'document')]
    .filter(Boolean)
    .join(' · ');
  return text ? h('p', { class: 'muted', 'data-testid': 'identity-attachments' }, text) : null;
}

function checkbox(id: string, name: string, value: string, checked: string[]): HTMLInputElement {
  return h('input', { type: 'checkbox', id, name, value, checked: checked.includes(value) });
}

function group(
  id: string,
  legend: string,
  /** Null: the list could not be read. */
  boxes: { label: string; box: HTMLInputElement }[] | null,
  [emptyText, href, linkText]: [string, string, string],
): HTMLFieldSetElement {
  return h(
    'fieldset',
    { id, class: 'attachment-group' },
    h('legend', null, legend),
    boxes === null
      ? h('p', { class: 'hint' }, `The ${legend.toLowerCase()} list could not be loaded: reload the page to change it.`)
      : boxes.length
        ? boxes.map(({ label, box }) => checkboxField(label, box))
        : h('p', { class: 'hint' }, emptyText, h('a', { href }, linkText), '.'),
  );
}

function sameSet(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((id) => b.includes(id));
}
