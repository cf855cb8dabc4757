// The one definition of control characters (src/http/control-characters.ts): what each kind of
// text keeps, and the C1 range and U+FFFD, which the identities' own patterns let through before.
import { describe, expect, test } from 'bun:test';
import { controlCharacters } from '../../src/http/control-characters.ts';
import { textProblems } from '../../src/identities/validation.ts';

describe('control characters', () => {
  const samples = {
    tab: '\t',
    lf: '\n',
    cr: '\r',
    ff: '\f',
    nul: '\u0000',
    esc: '\u001b',
    del: '\u007f',
    c1: '\u0085',
  };
  const found = (pattern: RegExp) =>
    Object.entries(samples)
      .filter(([, char]) => pattern.test(`a${char}b`))
      .map(([name]) => name);

  test('each kind keeps its whitespace and refuses every other control, C0, DEL and C1', () => {
    expect(found(controlCharacters('none'))).toEqual(['tab', 'lf', 'cr', 'ff', 'nul', 'esc', 'del', 'c1']);
    expect(found(controlCharacters('tab and line breaks'))).toEqual(['ff', 'nul', 'esc', 'del', 'c1']);
    expect(found(controlCharacters('tab, line breaks and form feed'))).toEqual(['nul', 'esc', 'del', 'c1']);
    // Letters outside ASCII are text, not controls.
    expect(controlCharacters('none').test('Zoë — 東京 ✓')).toBe(false);
  });

  test('U+FFFD, what a decoder leaves of bytes that were not UTF-8, only where asked', () => {
    expect(controlCharacters('none').test('a\uFFFDb')).toBe(false);
    expect(controlCharacters('none', { undecoded: true }).test('a\uFFFDb')).toBe(true);
  });

  test('global patterns replace them all and stay usable (no lastIndex left over)', () => {
    const pattern = controlCharacters('tab and line breaks', { global: true });
    expect('a\u0000b\tc\u0085d\ne'.replace(pattern, ' ')).toBe('a b\tc d\ne');
    expect('x\u0007y'.replace(pattern, ' ')).toBe('x y');
  });

  test("an identity's name and prompt refuse a C1 control as they refuse a C0 one", () => {
    expect(textProblems({ name: 'Ada\u0085', prompt: 'Be kind.\tAlways.\n' })).toEqual([
      {
        loc: ['body', 'name'],
        msg: 'name must be valid UTF-8 text without control characters',
        type: 'string_invalid_characters',
      },
    ]);
    expect(textProblems({ name: 'Ada', prompt: 'Be kind.\u009b' })).toHaveLength(1);
    expect(textProblems({ name: 'Ada', prompt: 'Be kind.\r\n\tAlways.' })).toEqual([]);
  });
});
