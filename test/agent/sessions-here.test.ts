// The census of sessions on this machine (agent/sessions-here.ts): what the offline replies'
// threads follow. Job processes are stood in for by real child processes.
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinSessionsHere, replyThreadsHere, sessionsHere } from '../../agent/sessions-here.ts';

const dirs: string[] = [];
const children: Bun.Subprocess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'sessions-here-'));
  dirs.push(dir);
  return dir;
}

/** Another process serving a session: a live pid with its file in the folder. */
function anotherSession(dir: string): Bun.Subprocess {
  const child = Bun.spawn(['sleep', '30']);
  children.push(child);
  writeFileSync(join(dir, String(child.pid)), '');
  return child;
}

test('a process counts while it serves, and not once it left', () => {
  const dir = freshDir();
  expect(sessionsHere(dir)).toBe(0);
  const leave = joinSessionsHere(dir);
  expect(sessionsHere(dir)).toBe(1);
  anotherSession(dir);
  expect(sessionsHere(dir)).toBe(2);
  leave();
  expect(sessionsHere(dir)).toBe(1);
  expect(readdirSync(dir)).not.toContain(String(process.pid));
});

test('a process killed outright is not counted, and its file is cleared', async () => {
  const dir = freshDir();
  const killed = anotherSession(dir);
  anotherSession(dir);
  writeFileSync(join(dir, 'not-a-pid'), '');
  expect(sessionsHere(dir)).toBe(2);
  killed.kill('SIGKILL');
  await killed.exited;
  expect(sessionsHere(dir)).toBe(1);
  expect(readdirSync(dir)).not.toContain(String(killed.pid));
});

test('a reply gets two threads while every session has two cores, else one', () => {
  const dir = freshDir();
  const leave = joinSessionsHere(dir);
  expect(replyThreadsHere(2, dir)).toBe(2); // alone on a 2-core machine
  anotherSession(dir);
  expect(replyThreadsHere(2, dir)).toBe(1); // a second session's face and video share the cores
  expect(replyThreadsHere(4, dir)).toBe(2);
  anotherSession(dir);
  expect(replyThreadsHere(4, dir)).toBe(1);
  expect(replyThreadsHere(1, dir)).toBe(1);
  leave();
});

test('a process that exits without leaving is cleared on exit', async () => {
  const dir = freshDir();
  const module = JSON.stringify(join(import.meta.dir, '../../agent/sessions-here.ts'));
  const script = `import { joinSessionsHere, sessionsHere } from ${module}; joinSessionsHere(${JSON.stringify(dir)}); console.log(sessionsHere(${JSON.stringify(dir)})); process.exit(0);`;
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe' });
  expect(await child.exited).toBe(0);
  expect((await new Response(child.stdout).text()).trim()).toBe('1'); // it was counted
  expect(readdirSync(dir)).toEqual([]);
});
