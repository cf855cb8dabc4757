// An HTML page's words with html-to-text (htmlparser2 underneath, linear in the input), with
// the two places its cost is not: nesting deeper than MAX_DEPTH is cut (its walk recurses), and
// tables are laid out a row a line here, cells joined by " | ", instead of its data-table layout,
// which builds a grid from each cell's colspan and rowspan (one cell spanning a million columns
// was a million-wide grid: issue 41).
import { convert, type FormatCallback } from 'html-to-text';

/** Elements nested deeper than this are left out; real pages nest a few dozen deep. */
const MAX_DEPTH = 200;

const tableRow: FormatCallback = (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 1 });
  let cells = 0;
  for (const child of elem.children) {
    const isCell = child.type === 'tag' && (child.name === 'td' || child.name === 'th');
    if (isCell && cells++ > 0) builder.addInline(' | ');
    walk(isCell ? child.children : [child], builder);
  }
  builder.closeBlock({ trailingLineBreaks: 1 });
};

export function htmlText(html: string): string {
  return convert(html, {
    wordwrap: false,
    limits: { maxDepth: MAX_DEPTH, ellipsis: ' ' },
    formatters: { tableRow },
    selectors: [
      { selector: 'a', options: { ignoreHref: true } },
      { selector: 'img', format: 'skip' },
      // A page's menus and footer are on every page and answer nothing: they only dilute the
      // first passage (bench/knowledge: "What is the host's WhatsApp number?" missed its page).
      ...['nav', 'footer', 'script', 'style', 'noscript'].map((selector) => ({ selector, format: 'skip' })),
      ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
      { selector: 'table', format: 'block' },
      { selector: 'tr', format: 'tableRow' },
    ],
  });
}
