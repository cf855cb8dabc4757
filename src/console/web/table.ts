// Tables that turn into stacked cards on a phone: each cell carries its column name in
// data-label, which the narrow-screen CSS shows before the value.
import { h } from './dom.ts';

type Content = Node | string | null | undefined | false;

export function dataTable(
  id: string,
  caption: string,
  headers: string[],
  rows: HTMLTableRowElement[],
): HTMLTableElement {
  return h(
    'table',
    { id, class: 'data-table' },
    h('caption', { class: 'visually-hidden' }, caption),
    h('thead', null, h('tr', null, ...headers.map((header) => h('th', { scope: 'col' }, header)))),
    h('tbody', null, ...rows),
  );
}

export function cell(label: string, ...content: Content[]): HTMLTableCellElement {
  return h('td', { 'data-label': label }, ...content);
}
