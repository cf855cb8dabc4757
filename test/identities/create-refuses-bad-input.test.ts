// Bad input to POST /v1/identities: each case answers with the right status in the error
// shape (docs/api.md#errors), and leaves nothing behind: no identity row, no stored file, no ledger entry.
import { describe, expect, test } from 'bun:test';
import * as fx from '../fixtures/index.ts';
import { type FormFields, file, identityForm, portrait } from '../support/forms.ts';
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

type Fields = () => FormFields | Promise<FormFields>;
/** identityForm's defaults with `fields` (made when the test runs) changed: refused with `status`. */
const formCase = (name: string, fields: Fields, status: number): Case => ({
  name,
  body: async () => identityForm(await fields()),
  status,
});
/** As formCase, refused with 422 at `field`, of `type` if given. */
const badField = (name: string, fields: Fields, field: string, type?: string): Case => ({
  ...formCase(name, fields, 422),
  loc: ['body', field],
  ...(type === undefined ? {} : { type }),
});

const CASES: Case[] = [
  badField('missing name', () => ({ name: undefined }), 'name', 'missing'),
  badField('empty name', () => ({ name: '' }), 'name', 'string_too_short'),
  badField('blank name', () => ({ name: '   \t ' }), 'name', 'string_blank'),
  badField('name over 200 characters', () => ({ name: 'n'.repeat(201) }), 'name', 'string_too_long'),
  badField('NUL byte in name', () => ({ name: 'Ada\u0000' }), 'name'),
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
  badField('missing prompt', () => ({ prompt: undefined }), 'prompt', 'missing'),
  badField('empty prompt', () => ({ prompt: '' }), 'prompt'),
  badField('blank prompt', () => ({ prompt: '\n\n' }), 'prompt', 'string_blank'),
  badField('a 1 MB prompt', () => ({ prompt: 'p'.repeat(1024 * 1024) }), 'prompt', 'string_too_long'),
  badField('missing image', () => ({ image: undefined }), 'image'),
  badField('image sent as a text field', () => ({ image: 'https://example.com/a.jpg' }), 'image'),
  badField(
    'name sent as a file',
    () => ({ name: file(new TextEncoder().encode('Ada'), 'name.txt', 'text/plain') }),
    'name',
  ),
  badField('language outside the five', () => ({ language: 'fr' }), 'language'),
  badField('language in upper case', () => ({ language: 'EN' }), 'language'),
  badField('empty language', () => ({ language: '' }), 'language'),
  badField('unknown pipeline_id', () => ({ pipeline_id: 'no-such-renderer' }), 'pipeline_id', 'unknown_pipeline'),
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
  badField('zero-byte image', () => ({ image: img(new Uint8Array()) }), 'image', 'file.empty'),
  formCase('GIF image', async () => ({ image: img(await fx.gif(), 'a.gif', 'image/gif') }), 415),
  formCase('PDF sent as image/jpeg', () => ({ image: img(fx.pdf()) }), 415),
  formCase('text file named .png', () => ({ image: img(fx.textFile(), 'a.png', 'image/png') }), 415),
  formCase('WAV sent as the image', () => ({ image: img(fx.wav({ seconds: 5 })) }), 415),
  badField('polyglot: JPEG magic over other content', () => ({ image: img(fx.polyglot()) }), 'image'),
  badField('truncated JPEG', async () => ({ image: img(fx.truncated(await portraitBytes(), 0.5)) }), 'image'),
  badField('truncated PNG', () => ({ image: img(fx.truncated(fx.portraitPng(), 0.4), 'a.png', 'image/png') }), 'image'),
  badField(
    'PNG decompression bomb',
    () => ({ image: img(fx.pngBomb(), 'bomb.png', 'image/png') }),
    'image',
    'image.too_many_pixels',
  ),
  badField(
    'image 100×100',
    async () => ({ image: img(await fx.tinyPng(100, 100), 'a.png', 'image/png') }),
    'image',
    'image.too_small',
  ),
  badField(
    'image 255×400',
    async () => ({ image: img(await fx.tinyPng(255, 400), 'a.png', 'image/png') }),
    'image',
    'image.too_small',
  ),
  {
    name: 'image over 10 MB',
    body: async () => {
      const big = fx.randomBytes(10 * 1024 * 1024 + 1);
      big.set([0xff, 0xd8, 0xff, 0xe0]);
      return identityForm({ image: img(big) });
    },
    status: 413,
  },
  formCase('request body over the limit', () => ({ image: img(fx.randomBytes(41 * 1024 * 1024)) }), 413),
  badField('zero-byte audio', () => ({ audio: aud(new Uint8Array()) }), 'audio', 'file.empty'),
  formCase('PNG sent as the audio', () => ({ audio: aud(fx.portraitPng(), 'a.wav') }), 415),
  formCase('text sent as audio/mpeg', () => ({ audio: aud(fx.textFile(), 'a.mp3', 'audio/mpeg') }), 415),
  formCase('MP4 with no audio track', async () => ({ audio: aud(await fx.mp4VideoOnly(), 'a.mp4', 'audio/mp4') }), 415),
  badField('WAV header over garbage', () => ({ audio: aud(fx.wavGarbage()) }), 'audio', 'audio.undecodable'),
  badField('ID3 tag over garbage', () => ({ audio: aud(fx.id3Garbage(), 'a.mp3', 'audio/mpeg') }), 'audio'),
  badField(
    'a 121 s WAV whose header claims 10 s',
    () => ({ audio: aud(fx.wav({ seconds: 121, sampleRate: 8000, claimSeconds: 10 })) }),
    'audio',
    'audio.too_long',
  ),
  badField(
    'a 130 s MP3',
    async () => ({ audio: aud(await fx.mp3({ seconds: 130 }), 'a.mp3', 'audio/mpeg') }),
    'audio',
    'audio.too_long',
  ),
  badField('a 1 s WAV', () => ({ audio: aud(fx.wav({ seconds: 1 })) }), 'audio', 'audio.too_short'),
  {
    name: 'audio over 25 MB',
    body: async () => {
      const big = fx.randomBytes(25 * 1024 * 1024 + 1);
      big.set(new TextEncoder().encode('RIFF\0\0\0\0WAVE'));
      return identityForm({ audio: aud(big) });
    },
    status: 413,
  },
  badField('audio sent as a text field', () => ({ audio: 'voice.wav' }), 'audio'),
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
