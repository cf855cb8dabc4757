// A stored upload's passages from the extraction process (extraction-process.ts), which is
// stopped (SIGKILL: a regex or a parser cannot be asked to stop) when its CPU time runs out or
// its memory passes the bound. Only this waiting runs on the API's event loop.
import { existsSync } from 'node:fs';
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
/** How often the process's memory and CPU time are read (Linux's /proc; elsewhere only wall time bounds it). */
const POLL_MS = 100;
/**
 * The budget is the extraction's CPU time: a parser waiting for the CPU on a busy machine (it
 * runs below everything else) is not slow itself, and a short text once failed a 2 s budget
 * twice beside a loaded test run. Its wall time is still capped, at this many times the budget,
 * so that a process that never gets the CPU ends too.
 */
export const EXTRACTION_WALL_MULTIPLE = 5;
/** Without /proc (not Linux) the CPU time cannot be read, and the wall time is the budget. */
const WALL_MULTIPLE = existsSync('/proc/self/stat') ? EXTRACTION_WALL_MULTIPLE : 1;
/** Linux reports CPU time in /proc in USER_HZ ticks, 100 a second on every architecture. */
const TICKS_PER_SECOND = 100;

export interface ExtractionLimits {
  /** The CPU seconds the extraction may use: the document's budget. */
  seconds: number;
  memoryBytes: number;
}

export interface Extracted {
  passages: string[];
  /** The CPU seconds the extraction process used (its wall time where /proc cannot tell). */
  cpuSeconds: number;
}

interface ProcessUse {
  residentBytes: number;
  cpuSeconds: number;
}

async function processUse(pid: number): Promise<ProcessUse | undefined> {
  try {
    const [status, stat] = await Promise.all([
      readFile(`/proc/${pid}/status`, 'utf8'),
      readFile(`/proc/${pid}/stat`, 'utf8'),
    ]);
    const kb = /^VmRSS:\s+(\d+) kB/m.exec(status)?.[1];
    // stat: "pid (comm) state …": utime and stime are the 12th and 13th fields after comm.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    if (!kb || !Number.isFinite(ticks)) return undefined;
    return { residentBytes: Number(kb) * 1024, cpuSeconds: ticks / TICKS_PER_SECOND };
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
): Promise<Extracted> {
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
  const started = performance.now();
  let cpuSeconds: number | undefined;
  const timer = setTimeout(() => stop(tooSlow(limits.seconds)), limits.seconds * WALL_MULTIPLE * 1000);
  const onAbort = () => stop(undefined);
  signal.addEventListener('abort', onAbort);
  const watch = setInterval(async () => {
    const use = await processUse(child.pid);
    if (!use) return;
    cpuSeconds = use.cpuSeconds;
    if (use.residentBytes > limits.memoryBytes) stop(tooBig(limits.memoryBytes));
    else if (use.cpuSeconds > limits.seconds) stop(tooSlow(limits.seconds));
  }, POLL_MS);
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
    // The last poll's reading (the process is gone now); one that ended before the first, its wall time.
    cpuSeconds ??= (performance.now() - started) / 1000;
    if (answer && 'passages' in answer) return { passages: answer.passages, cpuSeconds };
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
