// A stored upload's passages from the extraction process (extraction-process.ts), which is
// stopped (SIGKILL: a regex or a parser cannot be asked to stop) when its time runs out or its
// memory passes the bound. Only this waiting runs on the API's event loop.
import { readFile } from 'node:fs/promises';
import { getPriority, setPriority } from 'node:os';
import { log } from '../logging/index.ts';
import { DocumentProblem, tooBig, tooSlow } from './extraction-bounds.ts';
import type { ExtractionAnswer, ExtractionJob } from './extraction-process.ts';

const ENTRY = new URL('./extraction-process.ts', import.meta.url).pathname;
const UNREADABLE = 'The document could not be read; upload another copy, or its text';
/**
 * How much lower than the API's the extraction process's CPU priority is (nice, up to 19): a
 * document is background work, and on a busy machine the API's answers (and, with --role all,
 * the agent's audio) go first.
 */
export const EXTRACTION_NICE_INCREMENT = 10;
/** How often the process's memory is read (Linux's /proc; elsewhere only time bounds it). */
const MEMORY_POLL_MS = 100;

export interface ExtractionLimits {
  /** When the whole document's processing must be over (its budget's end). */
  deadline: number;
  /** The budget in seconds, for the detail. */
  seconds: number;
  memoryBytes: number;
}

async function residentBytes(pid: number): Promise<number | undefined> {
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined; // gone, or not Linux
  }
}

/** The passages, or a DocumentProblem saying which bound stopped it or that it could not be read. */
export async function extractPassages(
  file: string,
  job: ExtractionJob,
  limits: ExtractionLimits,
  signal: AbortSignal,
): Promise<string[]> {
  signal.throwIfAborted();
  // --smol: the collector runs more often; a document's text is small next to the heap it parses in.
  const child = Bun.spawn([process.execPath, '--smol', ENTRY, file, JSON.stringify(job)], {
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  });
  try {
    setPriority(child.pid, Math.min(19, getPriority() + EXTRACTION_NICE_INCREMENT));
  } catch {
    // Already gone (its exit is read below), or a platform without priorities.
  }
  let stoppedBy: DocumentProblem | undefined;
  const stop = (why: DocumentProblem | undefined) => {
    stoppedBy ??= why;
    child.kill('SIGKILL');
  };
  const timer = setTimeout(() => stop(tooSlow(limits.seconds)), Math.max(0, limits.deadline - Date.now()));
  const onAbort = () => stop(undefined);
  signal.addEventListener('abort', onAbort);
  const watch = setInterval(async () => {
    const bytes = await residentBytes(child.pid);
    if (bytes !== undefined && bytes > limits.memoryBytes) stop(tooBig(limits.memoryBytes));
  }, MEMORY_POLL_MS);
  try {
    const [output, errors, code] = await Promise.all([
      new Response(child.stdout).text(),
      new Response(child.stderr).text(),
      child.exited,
    ]);
    signal.throwIfAborted();
    if (stoppedBy) throw stoppedBy;
    let answer: ExtractionAnswer | undefined;
    try {
      answer = JSON.parse(output) as ExtractionAnswer;
    } catch {
      answer = undefined;
    }
    if (answer && 'passages' in answer) return answer.passages;
    if (answer && 'problem' in answer) throw new DocumentProblem(answer.problem);
    // A parser's own failure (a stack overflow, say) or a crash: the user can only try another copy.
    log.warn(
      { exit_code: code, error: answer && 'error' in answer ? answer.error : errors.slice(-2000) },
      'a document could not be extracted',
    );
    throw new DocumentProblem(UNREADABLE);
  } finally {
    clearTimeout(timer);
    clearInterval(watch);
    signal.removeEventListener('abort', onAbort);
  }
}
