// Bad input to POST /v1/identities: each case answers with the right status in the error
// shape (docs/api.md#errors), and leaves nothing behind: no identity row, no stored file, no ledger entry.
import { describe, expect, test } from 'bun:test';
import * as fx from '../fixtures/index.ts';
import { file, identityForm, portrait } from '../support/forms.ts';
import { ENGINES } from '../support/service.ts';
import { storedState } from '../support/stored-state.ts';
import { suiteServiceWithAccount } from '../support/suite-service.ts';

type Body = FormData | string | Uint8Array | undefined;
interface Case {
  name: string;
  body: () => Promise<Body>;
  headers?: Record<string, string>;
  status: number;
  /** For 422: the `loc` expected among the problems. */
  loc?: (string | number)[];
  type?: string;
}

const BOUNDARY = 'likenessBoundary7d3';
/** A hand-built multipart body, for what FormData cannot express (raw bytes in text fields). */
function rawMultipart(
  parts: { name: string; filename?: string; type?: string; data: Uint8Array | string }[],
): Uint8Array {
  const chunks: Uint8Array[] = [];
  const enc = new TextEncoder();
  for (const part of parts) {
    let head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="${part.name}"`;
    if (part.filename) head += `; filename="${part.filename}"`;
    head += '\r\n';
    if (part.type) head += `Content-Type: ${part.type}\r\n`;
    chunks.push(
      enc.encode(`${head}\r\n`),
      typeof part.data === 'string' ? enc.encode(part.data) : part.data,
      enc.encode('\r\n'),
    );
  }
  chunks.push(enc.encode(`--${BOUNDARY}--\r\n`));
  return new Uint8Array(Buffer.concat(chunks));
}
const multipartHeaders = { 'content-type': `multipart/form-data; boundary=${BOUNDARY}` };

async function portraitBytes(): Promise<Uint8Array> {
  return new Uint8Array(await (await portrait()).arrayBuffer());
}
const img = (bytes: Uint8Array, name = 'photo.jpg', type = 'image/jpeg') => file(bytes, name, type);
const aud = (bytes: Uint8Array, name = 'voice.wav', type = 'audio/wav') => file(bytes, name, type);

const CASES: Case[] = [
  {
    name: 'missing name',
    body: () => identityForm({ name: undefined }),
    status: 422,
    loc: ['body', 'name'],
    type: 'missing',
  },
  {
    name: 'empty name',
    body: () => identityForm({ name: '' }),
    status: 422,
    loc: ['body', 'name'],
    type: 'string_too_short',
  },
  {
    name: 'blank name',
    body: () => identityForm({ name: '   \t ' }),
    status: 422,
    loc: ['body', 'name'],
    type: 'string_blank',
  },
  {
    name: 'name over 200 characters',
    body: () => identityForm({ name: 'n'.repeat(201) }),
    status: 422,
    loc: ['body', 'name'],
    type: 'string_too_long',
  },
  { name: 'NUL byte in name', body: () => identityForm({ name: 'Ada\u0000' }), status: 422, loc: ['body', 'name'] },
  {
    name: 'non-UTF-8 name',
    body: async () =>
      rawMultipart([
        { name: 'name', data: new Uint8Array([0x41, 0xff, 0xfe, 0x64, 0x61]) },
        { name: 'prompt', data: 'Hello' },
        { name: 'image', filename: 'a.jpg', type: 'image/jpeg', data: await portraitBytes() },
      ]),
    headers: multipartHeaders,
    status: 422,
    loc: ['body', 'name'],
    type: 'string_invalid_characters',
  },
  {
    name: 'missing prompt',
    body: () => identityForm({ prompt: undefined }),
    status: 422,
    loc: ['body', 'prompt'],
    type: 'missing',
  },
  { name: 'empty prompt', body: () => identityForm({ prompt: '' }), status: 422, loc: ['body', 'prompt'] },
  {
    name: 'blank prompt',
    body: () => identityForm({ prompt: '\n\n' }),
    status: 422,
    loc: ['body', 'prompt'],
    type: 'string_blank',
  },
  {
    name: 'a 1 MB prompt',
    body: () => identityForm({ prompt: 'p'.repeat(1024 * 1024) }),
    status: 422,
    loc: ['body', 'prompt'],
    type: 'string_too_long',
  },
  { name: 'missing image', body: () => identityForm({ image: undefined }), status: 422, loc: ['body', 'image'] },
  {
    name: 'image sent as a text field',
    body: () => identityForm({ image: 'https://example.com/a.jpg' }),
    status: 422,
    loc: ['body', 'image'],
  },
  {
    name: 'name sent as a file',
    body: async () => identityForm({ name: file(new TextEncoder().encode('Ada'), 'name.txt', 'text/plain') }),
    status: 422,
    loc: ['body', 'name'],
  },
  {
    name: 'language outside the five',
    body: () => identityForm({ language: 'fr' }),
    status: 422,
    loc: ['body', 'language'],
  },
  {
    name: 'language in upper case',
    body: () => identityForm({ language: 'EN' }),
    status: 422,
    loc: ['body', 'language'],
  },
  { name: 'empty language', body: () => identityForm({ language: '' }), status: 422, loc: ['body', 'language'] },
  {
    name: 'unknown pipeline_id',
    body: () => identityForm({ pipeline_id: 'no-such-renderer' }),
    status: 422,
    loc: ['body', 'pipeline_id'],
    type: 'unknown_pipeline',
  },
  {
    name: 'duplicate name field',
    body: async () => {
      const data = await identityForm();
      data.append('name', 'Second');
      return data;
    },
    status: 422,
    loc: ['body', 'name'],
    type: 'duplicate_field',
  },
  {
    name: 'duplicate image field',
    body: async () => {
      const data = await identityForm();
      data.append('image', await portrait());
      return data;
    },
    status: 422,
    loc: ['body', 'image'],
    type: 'duplicate_field',
  },
  {
    name: 'missing multipart boundary',
    body: async () => rawMultipart([{ name: 'name', data: 'Ada' }]),
    headers: { 'content-type': 'multipart/form-data' },
    status: 422,
    loc: ['body'],
  },
  {
    name: 'garbage multipart body',
    body: async () => 'this is not multipart at all',
    headers: multipartHeaders,
    status: 422,
    loc: ['body'],
  },
  {
    name: 'JSON instead of multipart',
    body: async () => JSON.stringify({ name: 'Ada', prompt: 'Hi', image: 'x' }),
    headers: { 'content-type': 'application/json' },
    status: 422,
    loc: ['body', 'image'],
  },
  { name: 'no body at all', body: async () => undefined, status: 422 },
  {
    name: 'zero-byte image',
    body: () => identityForm({ image: img(new Uint8Array()) }),
    status: 422,
    loc: ['body', 'image'],
    type: 'file.empty',
  },
  {
    name: 'GIF image',
    body: async () => identityForm({ image: img(await fx.gif(), 'a.gif', 'image/gif') }),
    status: 415,
  },
  { name: 'PDF sent as image/jpeg', body: async () => identityForm({ image: img(fx.pdf()) }), status: 415 },
  {
    name: 'text file named .png',
    body: async () => identityForm({ image: img(fx.textFile(), 'a.png', 'image/png') }),
    status: 415,
  },
  {
    name: 'WAV sent as the image',
    body: async () => identityForm({ image: img(fx.wav({ seconds: 5 })) }),
    status: 415,
  },
  {
    name: 'polyglot: JPEG magic over other content',
    body: async () => identityForm({ image: img(fx.polyglot()) }),
    status: 422,
    loc: ['body', 'image'],
  },
  {
    name: 'truncated JPEG',
    body: async () => identityForm({ image: img(fx.truncated(await portraitBytes(), 0.5)) }),
    status: 422,
    loc: ['body', 'image'],
  },
  {
    name: 'truncated PNG',
    body: async () => identityForm({ image: img(fx.truncated(fx.portraitPng(), 0.4), 'a.png', 'image/png') }),
    status: 422,
    loc: ['body', 'image'],
  },
  {
    name: 'PNG decompression bomb',
    body: async () => identityForm({ image: img(fx.pngBomb(), 'bomb.png', 'image/png') }),
    status: 422,
    loc: ['body', 'image'],
    type: 'image.too_many_pixels',
  },
  {
    name: 'image 100×100',
    body: async () => identityForm({ image: img(await fx.tinyPng(100, 100), 'a.png', 'image/png') }),
    status: 422,
    loc: ['body', 'image'],
    type: 'image.too_small',
  },
  {
    name: 'image 255×400',
    body: async () => identityForm({ image: img(await fx.tinyPng(255, 400), 'a.png', 'image/png') }),
    status: 422,
    loc: ['body', 'image'],
    type: 'image.too_small',
  },
  {
    name: 'image over 10 MB',
    body: async () => {
      const big = fx.randomBytes(10 * 1024 * 1024 + 1);
      big.set([0xff, 0xd8, 0xff, 0xe0]);
      return identityForm({ image: img(big) });
    },
    status: 413,
  },
  {
    name: 'request body over the limit',
    body: async () => identityForm({ image: img(fx.randomBytes(41 * 1024 * 1024)) }),
    status: 413,
  },
  {
    name: 'zero-byte audio',
    body: () => identityForm({ audio: aud(new Uint8Array()) }),
    status: 422,
    loc: ['body', 'audio'],
    type: 'file.empty',
  },
  {
    name: 'PNG sent as the audio',
    body: async () => identityForm({ audio: aud(fx.portraitPng(), 'a.wav') }),
    status: 415,
  },
  {
    name: 'text sent as audio/mpeg',
    body: async () => identityForm({ audio: aud(fx.textFile(), 'a.mp3', 'audio/mpeg') }),
    status: 415,
  },
  {
    name: 'MP4 with no audio track',
    body: async () => identityForm({ audio: aud(await fx.mp4VideoOnly(), 'a.mp4', 'audio/mp4') }),
    status: 415,
  },
  {
    name: 'WAV header over garbage',
    body: async () => identityForm({ audio: aud(fx.wavGarbage()) }),
    status: 422,
    loc: ['body', 'audio'],
    type: 'audio.undecodable',
  },
  {
    name: 'ID3 tag over garbage',
    body: async () => identityForm({ audio: aud(fx.id3Garbage(), 'a.mp3', 'audio/mpeg') }),
    status: 422,
    loc: ['body', 'audio'],
  },
  {
    name: 'a 121 s WAV whose header claims 10 s',
    body: async () => identityForm({ audio: aud(fx.wav({ seconds: 121, sampleRate: 8000, claimSeconds: 10 })) }),
    status: 422,
    loc: ['body', 'audio'],
    type: 'audio.too_long',
  },
  {
    name: 'a 130 s MP3',
    body: async () => identityForm({ audio: aud(await fx.mp3({ seconds: 130 }), 'a.mp3', 'audio/mpeg') }),
    status: 422,
    loc: ['body', 'audio'],
    type: 'audio.too_long',
  },
  {
    name: 'a 1 s WAV',
    body: async () => identityForm({ audio: aud(fx.wav({ seconds: 1 })) }),
    status: 422,
    loc: ['body', 'audio'],
    type: 'audio.too_short',
  },
  {
    name: 'audio over 25 MB',
    body: async () => {
      const big = fx.randomBytes(25 * 1024 * 1024 + 1);
      big.set(new TextEncoder().encode('RIFF\0\0\0\0WAVE'));
      return identityForm({ audio: aud(big) });
    },
    status: 413,
  },
  {
    name: 'audio sent as a text field',
    body: () => identityForm({ audio: 'voice.wav' }),
    status: 422,
    loc: ['body', 'audio'],
  },
];

describe.each(ENGINES)('bad input to POST /v1/identities on %s', (engine) => {
  const suite = suiteServiceWithAccount(engine, { credits: 1000 });

  test('the table has at least 40 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
  });

  for (const c of CASES) {
    test(`${c.name} → ${c.status}, nothing stored`, async () => {
      const { service, account } = suite;
      const before = await storedState(service, account);
      const body = await c.body();
      const response = await account.call('POST', '/v1/identities', { body: body as BodyInit, headers: c.headers });
      const payload = (await response.json()) as { detail: unknown };
      expect(response.status).toBe(c.status);
      if (c.status === 422) {
        expect(Array.isArray(payload.detail)).toBe(true);
        const problems = payload.detail as { loc: unknown[]; msg: string; type: string }[];
        for (const p of problems) {
          expect(Array.isArray(p.loc)).toBe(true);
          expect(typeof p.msg).toBe('string');
          expect(typeof p.type).toBe('string');
        }
        if (c.loc) expect(problems.map((p) => p.loc)).toContainEqual(c.loc);
        if (c.type) expect(problems.map((p) => p.type)).toContain(c.type);
      } else {
        expect(typeof payload.detail).toBe('string');
      }
      const after = await storedState(service, account);
      expect(after.identities).toBe(before.identities);
      expect(after.ledger).toBe(before.ledger);
      expect(after.files).toEqual(before.files);
      expect(after.balance).toBe(before.balance);
    });
  }
});
