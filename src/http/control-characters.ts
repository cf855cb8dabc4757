// Control characters in text from outside: Unicode's Cc (C0, DEL and the C1 range U+0080–U+009F),
// one definition for every field that refuses them and every file whose text replaces them. They
// differ only in the whitespace each keeps: a name none, a prompt tab and line breaks, a text file
// also form feeds. U+FFFD is what a decoder leaves for bytes that were not UTF-8: fields that
// refuse controls refuse it too.

/** The whitespace controls a kind of text may hold. */
export type KeptWhitespace = 'none' | 'tab and line breaks' | 'tab, line breaks and form feed';

const KEPT: Record<KeptWhitespace, string> = {
  none: '',
  'tab and line breaks': '\\t\\n\\r',
  'tab, line breaks and form feed': '\\t\\n\\f\\r',
};

/**
 * A pattern of the controls `kept` does not allow (`undecoded`: and U+FFFD); `global` for
 * replacing or counting them all.
 */
export function controlCharacters(
  kept: KeptWhitespace,
  { undecoded = false, global = false }: { undecoded?: boolean; global?: boolean } = {},
): RegExp {
  const allowed = KEPT[kept];
  const controls = undecoded ? '[\\p{Cc}\\uFFFD]' : '\\p{Cc}';
  return new RegExp(allowed ? `(?![${allowed}])${controls}` : controls, global ? 'gu' : 'u');
}
