// The app's type names every route (src/server.ts builds it in one chain, the resource routes
// under literal prefixes), as Elysia's typed clients read it. A route lost from the type fails
// the typecheck (test/architecture/typecheck.test.ts) on the declarations below.
import { expect, test } from 'bun:test';
import type { buildApp } from '../../src/server.ts';

type Routes = ReturnType<typeof buildApp>['~Routes'];
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/** Each key present, and no other: a missing or an unexpected resource is a type error. */
const publicResources: Record<keyof Routes['v1'], true> = {
  identities: true,
  voices: true,
  pipelines: true,
  sessions: true,
  credits: true,
  usage: true,
  webhooks: true,
  tools: true,
  documents: true,
  'publishable-keys': true,
  'recording-storage': true,
  visitors: true,
  'visitor-tokens': true,
  embed: true,
};
/** The console's API: the same resources (not the embed's start: a website's), and its own sign-in, keys and account routes. */
type ConsoleOwn = 'keys' | 'password' | 'sign-up' | 'sign-in' | 'signed-in' | 'sign-out' | 'me';
const consoleTwins: Same<
  Exclude<keyof Routes['console']['api'], ConsoleOwn>,
  Exclude<keyof Routes['v1'], 'embed'>
> = true;
/** One route's answer, as the type has it. */
const sessionStatus: Routes['v1']['sessions'][':session_id']['get']['response'][200]['status'][] = ['running', 'ended'];
/** Every door at the top: `get` is the root path's own route. */
const doors: Record<keyof Routes, true> = {
  v1: true,
  console: true,
  assets: true,
  examples: true,
  healthz: true,
  readyz: true,
  metrics: true,
  docs: true,
  rtc: true,
  internal: true,
  'embed.js': true,
  embed: true,
  get: true,
};

test('every door, the public API and its console twins are in the type, down to the answer of a route', () => {
  expect(Object.keys(publicResources)).toHaveLength(14);
  expect(consoleTwins).toBe(true);
  expect(Object.keys(doors)).toContain('v1');
  expect(sessionStatus).toEqual(['running', 'ended']);
});
