// What a document's processing may take and produce, and the words its uploader reads when one
// is crossed (the document's `detail`): shared by the extraction process and the API's side.
import type { DocumentProcessingBounds } from '../config.ts';

/** Why a document cannot be used, worded for the person who uploaded it (the document's `detail`). */
export class DocumentProblem extends Error {}

/** The bounds the extraction process applies itself (time and memory are the API side's). */
export type ExtractionBounds = Pick<
  DocumentProcessingBounds,
  'maxCharacters' | 'maxPassages' | 'maxPdfPages' | 'maxPdfInflatedBytes'
>;

const thousands = (n: number) => n.toLocaleString('en-US');

export const tooLong = (bounds: ExtractionBounds) =>
  new DocumentProblem(
    `The document has more than ${thousands(bounds.maxCharacters)} characters of text; split it into smaller documents`,
  );

export const tooManyPassages = (bounds: ExtractionBounds) =>
  new DocumentProblem(
    `The document gives more than ${thousands(bounds.maxPassages)} passages; split it into smaller documents`,
  );

export const tooSlow = (seconds: number) =>
  new DocumentProblem(
    `Processing took longer than ${seconds} s and was stopped; upload a smaller or simpler document, or its text`,
  );

export const tooBig = (bytes: number) =>
  new DocumentProblem(
    `Reading the document needed more than ${Math.round(bytes / 1024 / 1024)} MB of memory and was stopped; upload a smaller document, or its text`,
  );

export const accountFull = (maxPassages: number) =>
  new DocumentProblem(
    `The account's documents may hold ${thousands(maxPassages)} passages together; delete documents to make room`,
  );
