// The knowledge bench's question set (questions.json) over its own documents (documents/), and
// how a passage or a reply is scored against a question: its expected keywords, compared without
// case, accents or punctuation ("7:30" is "7 30", "39,90" matches "39.90").
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { SpokenLanguage } from '../../src/contract/index.ts';
import { normalise } from '../conversation/eval/scoring.ts';

export interface KnowledgeQuestion {
  id: string;
  language: SpokenLanguage;
  text: string;
  /** The document (its file name) whose passage answers it; null: no document does. */
  expect_document: string | null;
  /** Each must appear in that passage and in a right reply. */
  expect_keywords: string[];
}

export interface BenchDocument {
  name: string;
  bytes: Uint8Array<ArrayBuffer>;
  type: string;
}

export const DOCUMENTS_DIR = join(import.meta.dir, 'documents');

const TYPES: Record<string, string> = {
  md: 'text/markdown',
  html: 'text/html',
  txt: 'text/plain',
  pdf: 'application/pdf',
};

export async function loadQuestions(): Promise<KnowledgeQuestion[]> {
  return (await Bun.file(join(import.meta.dir, 'questions.json')).json()) as KnowledgeQuestion[];
}

export async function loadDocuments(): Promise<BenchDocument[]> {
  const names = (await readdir(DOCUMENTS_DIR)).sort();
  return Promise.all(
    names.map(async (name) => ({
      name,
      bytes: new Uint8Array(await Bun.file(join(DOCUMENTS_DIR, name)).arrayBuffer()) as Uint8Array<ArrayBuffer>,
      type: TYPES[name.split('.').pop()!] ?? 'application/octet-stream',
    })),
  );
}

/** The keyword as whole words of the text (a trailing plural allowed: "2 year" in "2 years"). */
export function hasKeyword(text: string, keyword: string): boolean {
  const escaped = normalise(keyword).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^| )${escaped}(s|es)?( |$)`).test(normalise(text));
}

export function hasAllKeywords(text: string, keywords: string[]): boolean {
  return keywords.every((keyword) => hasKeyword(text, keyword));
}

/** A reply saying it does not know, or that the documents do not say (en, es). */
const DONT_KNOW = [
  /\b(do not|don't|doesn't|does not) (know|have|say|mention|contain)/i,
  /\bnot (sure|mentioned|specified|stated|provided|available|listed)\b/i,
  /\bno (information|details|data|mention)\b/i,
  /\b(can ?not|can't|unable to) (find|answer|help|provide|say)/i,
  /\bsorry\b/i,
  /\bno (lo )?s[ée]\b/i,
  /\bno (tengo|dispongo de|encuentro|aparece|se menciona|se indica|puedo)/i,
  /\bno hay (información|datos|nada)/i,
  /\bno estoy segur[oa]\b/i,
  /\blo siento\b/i,
  /\bdesconozco\b/i,
];

export function saysItDoesNotKnow(reply: string): boolean {
  return DONT_KNOW.some((pattern) => pattern.test(reply));
}

/** "12/15 (80 %)". */
export function share(hits: number, total: number): string {
  return total === 0 ? '–' : `${hits}/${total} (${Math.round((hits / total) * 100)} %)`;
}
