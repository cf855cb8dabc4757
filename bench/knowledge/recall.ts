// bench/knowledge/recall: does retrieval find the passage that answers? The bench's documents
// (documents/) are uploaded to a service and processed by it (retrieval.ts); each question of
// questions.json is searched as a turn's is (src/knowledge/search.ts), and counted found when a
// passage of its document holding every expected keyword is first (recall@1) or among the
// first three (recall@3) above the service's similarity floor; "without the floor" counts the
// three best whatever their score. Questions no document answers should get nothing above the
// floor (the no-answer rate). Per language, with each question's scores listed.
//   bun bench/knowledge/recall.ts [--floor 0.8] [--verbose]
// --floor: another floor than the service's (KNOWLEDGE_SIMILARITY_FLOOR or the model's).
import { parseArgs } from 'node:util';
import type { KnowledgePassage } from '../../src/contract/index.ts';
import { hasAllKeywords, type KnowledgeQuestion, loadQuestions, share } from './question-set.ts';
import { openKnowledgeBench } from './retrieval.ts';

const { values } = parseArgs({
  options: { floor: { type: 'string' }, verbose: { type: 'boolean', default: false } },
});

const questions = await loadQuestions();
const knowledge = await openKnowledgeBench();
const floor = values.floor === undefined ? knowledge.floor : Number(values.floor);
console.log(`${knowledge.describe()} cpus=${navigator.hardwareConcurrency} bun=${Bun.version}`);
console.log(`recall counted at floor ${floor}`);

interface Outcome {
  question: KnowledgeQuestion;
  /** The three best passages, whatever their score. */
  best: KnowledgePassage[];
  /** Rank (1-based) of the first passage that answers, among `best`; 0: none. */
  rank: number;
}

const answers = (question: KnowledgeQuestion, passage: KnowledgePassage) =>
  knowledge.fileOf(passage.document_id) === question.expect_document &&
  hasAllKeywords(passage.text, question.expect_keywords);

const outcomes: Outcome[] = [];
const tookMs: number[] = [];
try {
  for (const question of questions) {
    const started = performance.now();
    // No floor here (and no length bound cutting a passage): the floor is applied below, so
    // one run shows both, and the scores show where a floor would cut.
    const { passages } = await knowledge.search(question.text, { floor: -1, maxChars: 1_000_000 });
    tookMs.push(performance.now() - started);
    const rank = passages.findIndex((passage) => answers(question, passage)) + 1;
    outcomes.push({ question, best: passages, rank });
    const scores = passages.map((p) => `${p.score.toFixed(3)} ${knowledge.fileOf(p.document_id).slice(0, 12)}`);
    const verdict =
      question.expect_document === null
        ? passages[0]!.score > floor
          ? 'ABOVE FLOOR'
          : 'none above'
        : rank === 0
          ? 'MISSED'
          : passages[rank - 1]!.score <= floor
            ? `rank ${rank} BELOW FLOOR`
            : `rank ${rank}`;
    console.log(`${question.id.padEnd(16)} ${verdict.padEnd(18)} ${scores.join(' | ')} | ${question.text}`);
    if (values.verbose && rank === 0 && question.expect_document)
      for (const p of passages) console.log(`    ${p.text.slice(0, 300)}`);
  }
} finally {
  await knowledge.stop();
}

const aboveFloor = (o: Outcome, rank: number) => o.rank > 0 && o.rank <= rank && o.best[o.rank - 1]!.score > floor;
const rows: string[] = [];
for (const language of ['en', 'es', 'all']) {
  const of = outcomes.filter((o) => language === 'all' || o.question.language === language);
  const answerable = of.filter((o) => o.question.expect_document !== null);
  const unanswerable = of.filter((o) => o.question.expect_document === null);
  const count = (test: (o: Outcome) => boolean, list = answerable) => share(list.filter(test).length, list.length);
  rows.push(
    `| ${language} | ${answerable.length} | ${count((o) => aboveFloor(o, 1))} | ${count((o) => aboveFloor(o, 3))} | ${count((o) => o.rank > 0 && o.rank <= 3)} | ${count((o) => o.best[0]!.score <= floor, unanswerable)} |`,
  );
}
// Where the floor sits against the scores: the answering passage's, and the best for questions nothing answers.
const answering = outcomes.filter((o) => o.rank > 0).map((o) => o.best[o.rank - 1]!.score);
const unrelated = outcomes.filter((o) => o.question.expect_document === null).map((o) => o.best[0]!.score);
const range = (xs: number[]) => (xs.length ? `${Math.min(...xs).toFixed(3)}–${Math.max(...xs).toFixed(3)}` : '–');
console.log(
  `\nscores: answering passages ${range(answering)}; best passage for questions nothing answers ${range(unrelated)}`,
);
// Other floors on the same scores: what raising or lowering it would keep and drop.
const answerableOutcomes = outcomes.filter((o) => o.question.expect_document !== null);
const unanswerableOutcomes = outcomes.filter((o) => o.question.expect_document === null);
console.log('\n| floor | recall@3 | nothing above the floor, unanswerable |\n|---|---|---|');
for (const other of [0.76, 0.78, 0.8, 0.82, 0.84]) {
  const found = answerableOutcomes.filter((o) => o.rank > 0 && o.best[o.rank - 1]!.score > other).length;
  const empty = unanswerableOutcomes.filter((o) => o.best[0]!.score <= other).length;
  console.log(
    `| ${other.toFixed(2)}${other === floor ? ' (used)' : ''} | ${share(found, answerableOutcomes.length)} | ${share(empty, unanswerableOutcomes.length)} |`,
  );
}
const sorted = tookMs.toSorted((a, b) => a - b);
console.log(
  `search (query embedding + ranking, in process): p50 ${sorted[Math.floor(sorted.length / 2)]!.toFixed(1)} ms, p95 ${sorted[Math.floor(sorted.length * 0.95)]!.toFixed(1)} ms`,
);
console.log(
  `\n| language | questions | recall@1 | recall@3 | recall@3 without the floor | nothing above the floor, of ${unrelated.length} unanswerable |`,
);
console.log('|---|---|---|---|---|---|');
for (const row of rows) console.log(row);
process.exit(0);
