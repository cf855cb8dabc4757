// Passages (src/knowledge/chunking.ts) and text extraction (extraction.ts, file-types.ts):
// passages stay within 800 characters, cut at paragraph or sentence ends, repeat a short last
// sentence across a cut inside a paragraph, and lose no words; types are read from the bytes.
import { describe, expect, test } from 'bun:test';
import { loadKnowledgeSettings } from '../../src/config.ts';
import { chunkText, PASSAGE_MAX_CHARS } from '../../src/knowledge/chunking.ts';
import { documentText } from '../../src/knowledge/extraction.ts';
import { documentType } from '../../src/knowledge/file-types.ts';
import { markdownText } from '../../src/knowledge/markdown-text.ts';
import { pdfWithText } from './support.ts';

const BOUNDS = loadKnowledgeSettings({}, undefined, '').processing;
const words = (text: string) => text.split(/\s+/).filter(Boolean);

describe('chunking', () => {
  test('short paragraphs gather into passages of 500–800 characters, cut between paragraphs', () => {
    const paragraphs = Array.from({ length: 30 }, (_, i) =>
      `Paragraph ${i} says something useful about topic ${i}.`.repeat(3),
    );
    const passages = chunkText(paragraphs.join('\n\n'));
    for (const passage of passages.slice(0, -1)) {
      expect(passage.length).toBeGreaterThanOrEqual(500);
      expect(passage.length).toBeLessThanOrEqual(PASSAGE_MAX_CHARS);
    }
    // Every paragraph is whole in exactly one passage (no overlap between paragraphs).
    for (const paragraph of paragraphs) expect(passages.filter((p) => p.includes(paragraph))).toHaveLength(1);
  });

  test('a long paragraph is cut at sentence ends, the last sentence repeated across the cut', () => {
    const sentences = Array.from({ length: 40 }, (_, i) => `Sentence number ${i} of the long paragraph ends here.`);
    const passages = chunkText(sentences.join(' '));
    expect(passages.length).toBeGreaterThan(2);
    for (const passage of passages) {
      expect(passage.length).toBeLessThanOrEqual(PASSAGE_MAX_CHARS + 2);
      expect(passage).toMatch(/^Sentence number \d+ .* ends here\.$/);
    }
    for (let i = 1; i < passages.length; i++) {
      const lastBefore = passages[i - 1]!.match(/Sentence number \d+ of the long paragraph ends here\.$/)![0];
      expect(passages[i]!.startsWith(lastBefore)).toBe(true);
    }
    expect(new Set(passages.flatMap(words))).toEqual(new Set(words(sentences.join(' '))));
  });

  test('a sentence with no end is cut between words; a word longer than a passage inside it', () => {
    const run = Array.from({ length: 400 }, (_, i) => `word${i}`).join(' ');
    const passages = chunkText(`${run}\n\n${'x'.repeat(2000)}`);
    for (const passage of passages) expect(passage.length).toBeLessThanOrEqual(PASSAGE_MAX_CHARS);
    expect(passages.join(' ')).toContain('word0 word1');
    expect(passages.join(' ')).toContain('word399');
    expect(chunkText(' \n\n \n')).toEqual([]);
  });
});

describe('extraction', () => {
  const bytes = (text: string) => new TextEncoder().encode(text);

  test('types come from the bytes, and the name for the text formats', async () => {
    expect(await documentType(pdfWithText(['Hi']), 'notes.txt')).toBe('application/pdf');
    expect(await documentType(bytes('<!-- x -->\n<HTML><body>Hi</body></HTML>'), 'page')).toBe('text/html');
    expect(await documentType(bytes('<p>Hi</p>'), 'page.htm')).toBe('text/html');
    expect(await documentType(bytes('# Hi'), 'README.md')).toBe('text/markdown');
    expect(await documentType(bytes('# Hi'), 'notes.txt')).toBe('text/plain');
    expect(await documentType(bytes('Zażółć gęślą jaźń'), 'pl.txt')).toBe('text/plain');
    // UTF-16 is text when its byte-order mark says so; without one its NULs read as binary.
    expect(await documentType(new Uint8Array([0xff, 0xfe, 0x41, 0x00]), 'utf16.txt')).toBe('text/plain');
    expect(await documentType(new Uint8Array([0x41, 0x00, 0x42, 0x00]), 'utf16.txt')).toBeUndefined();
    // Not UTF-8, but text in Windows-1252 ("Ã(A"): read as such.
    expect(await documentType(new Uint8Array([0xc3, 0x28, 0x41]), 'latin.txt')).toBe('text/plain');
    expect(await documentType(bytes('a\u0000b'), 'nul.txt')).toBeUndefined();
  });

  test('Markdown keeps its words, not its marks; snake_case stays', () => {
    const markdown =
      '---\ntitle: x\n---\n# Title\n\n> Quote with `code` and [a link](https://x.example)\n\n- **bold** and *italic* and _under_\n1. set max_document_bytes\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n![alt text](img.png)';
    const text = markdownText(markdown);
    expect(words(text)).toEqual(
      words('Title Quote with code and a link bold and italic and under set max_document_bytes a b 1 2 alt text'),
    );
  });

  test('a PDF gives its text layer; control characters are dropped', async () => {
    expect(await documentText(pdfWithText(['First line.', 'Second (line).']), 'application/pdf', BOUNDS)).toMatch(
      /First line\.\s+Second \(line\)\./,
    );
    const padding = ' more words'.repeat(20); // a text file may hold a stray control or two, not many
    expect(await documentText(bytes(`a\u0007b\r\nc${padding}`), 'text/plain', BOUNDS)).toBe(`a b\nc${padding}`);
  });
});
