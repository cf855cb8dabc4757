// The adapter to @livekit/agents' internals (agent/agents-internals.ts) was written against one
// version: a different one installed fails here, naming the file to review. What each function
// does is shown where it matters (test/conversation/visitor-reach.test.ts for the session host).
import { expect, test } from 'bun:test';
import { readFileSync } from 'node:fs';
import { AGENTS_VERSION } from '../../agent/agents-internals.ts';

test('the installed @livekit/agents is the version agent/agents-internals.ts was checked against', () => {
  const installed = (
    JSON.parse(readFileSync(require.resolve('@livekit/agents/package.json'), 'utf8')) as { version: string }
  ).version;
  expect(
    installed === AGENTS_VERSION
      ? 'same'
      : `@livekit/agents ${installed} is installed, agent/agents-internals.ts was written for ${AGENTS_VERSION}: review each function there (and agent/patches) against the new version, then update AGENTS_VERSION`,
  ).toBe('same');
});
