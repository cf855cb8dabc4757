// Markdown's words without its marks, in time linear in the input whatever it holds (issue 41):
// read a line at a time, so no pattern spans lines (a leading `\s*` under the `m` flag rescanned
// every blank line after it), and every inline pattern's span stops at the next character of its
// own kind (`[^*]` inside `*…*`), so the spans tried from successive starts never overlap.

const FRONT_MATTER = /^---\n[\s\S]*?\n---\n/; // anchored: tried once
const FENCE = /^[ \t]*(?:```|~~~)/;
const LINK_DEFINITION = /^ {0,3}\[[^[\]\n]+\]:[ \t]+\S/;
const LINE_MARKS = [
  /^ {0,3}#{1,6}[ \t]+/, // heading marks
  /^(?: {0,3}>[ \t]?)+/, // quotes, nested too
  /^[ \t]*(?:[-*+]|\d{1,9}[.)])[ \t]+/, // list marks
];
const INLINE: [RegExp, string][] = [
  [/!\[([^[\]\n]*)\]\([^()\n]*\)/g, '$1'], // images: their alt text
  [/\[([^[\]\n]+)\]\([^()\n]*\)/g, '$1'], // links: their text
  [/<[^<>\n]+>/g, ''], // inline HTML tags
  [/\|/g, ' '], // table cells
  [/\*\*([^*\n]+)\*\*/g, '$1'], // bold
  [/__([^_\n]+)__/g, '$1'],
  [/\*(\S(?:[^*\n]*?\S)?)\*/g, '$1'], // italics
  [/(^|\W)_(\S(?:[^_\n]*?\S)?)_(?=\W|$)/g, '$1$2'], // italics, not snake_case
  [/`([^`\n]+)`/g, '$1'], // inline code
];

/** A thematic break (`***`, `- - -`) or a table's separator row (`|---|:--:|`): no words. */
function isRule(line: string): boolean {
  const marks = line.replace(/[ \t]/g, '');
  if (marks.length >= 3 && /^(?:-+|\*+|_+)$/.test(marks)) return true;
  return marks.includes('|') && marks.includes('-') && /^[|:-]+$/.test(marks);
}

/** The line's words; a line of marks only is left empty (it may end a paragraph). */
function markdownLine(line: string): string {
  if (FENCE.test(line) || LINK_DEFINITION.test(line) || isRule(line)) return '';
  let text = line;
  for (const mark of LINE_MARKS) text = text.replace(mark, '');
  for (const [pattern, replacement] of INLINE) text = text.replace(pattern, replacement);
  return text;
}

/** Markdown's words: headings, emphasis, links, images, code fences and tables lose their marks. */
export function markdownText(markdown: string): string {
  return markdown.replace(FRONT_MATTER, '').split('\n').map(markdownLine).join('\n');
}
