// A visitor's turn that takes leave ("Thanks, goodbye!", "Vale, hasta luego."), told by a rule:
// with the offline model an identity's end_session tool was never called for one (issue 45
// point 7), so on that model a farewell ends the session without asking it (index.ts). The rule
// errs toward going on: the turn's last clause must be a farewell, with at most a thanks or an
// "okay" around it, and a turn with a question in it is never one ("How do I say goodbye in
// Spanish?", "See you Friday, what's the address?").

/** Farewell phrases, accents and case folded, in the languages the service speaks. */
const FAREWELL = [
  // en
  'good ?bye',
  'bye(?: bye)?',
  'see you(?: later| soon| tomorrow| next time| around)?',
  'talk to you (?:later|soon)',
  'have a (?:good|nice|great) (?:day|evening|night|one|weekend)',
  'take care',
  'that(?: i)?s all(?: i needed| for now| for today)?',
  'that is all(?: i needed| for now| for today)?',
  'good night',
  // es
  'adios',
  'hasta (?:luego|pronto|manana|la vista|otra)',
  'nos vemos',
  'chao',
  'chau',
  'eso es todo',
  'que (?:tengas|tenga) (?:un )?buen dia',
  'buenas noches',
  // pl
  'do widzenia',
  'do zobaczenia',
  'na razie',
  'pa pa',
  'dobranoc',
  'to wszystko',
  // uk
  'до побачення',
  'бувай(?:те)?',
  'на все добре',
  'па па',
  'це все',
  'на добраніч',
].join('|');

/** What may stand beside a farewell in its clause: thanks, okay, a name-free "for now" and the like. */
const AROUND = [
  'ok(?:ay)?',
  'alright',
  'well',
  'great',
  'perfect',
  'thanks?(?: you)?(?: (?:so|very) much)?(?: for (?:your|the) help)?',
  'then',
  'and',
  'for now',
  'everyone',
  'vale',
  'bueno',
  'perfecto',
  'muchas gracias',
  'gracias(?: por (?:tu|su) ayuda)?',
  'entonces',
  'y',
  'dzieki',
  'dziekuje(?: bardzo)?',
  'dobrze',
  'okej',
  'дякую',
  'добре',
  'гаразд',
].join('|');

const FAREWELL_CLAUSE = new RegExp(`^(?:(?:${AROUND}) )*(?:${FAREWELL})(?: (?:${AROUND}|${FAREWELL}))*$`, 'u');
/** A clause of only thanks or okay: after a farewell ("That's all, thanks."), not one on its own. */
const AROUND_CLAUSE = new RegExp(`^(?:${AROUND})(?: (?:${AROUND}))*$`, 'u');

/** Lower case, accents off (Latin letters), apostrophes dropped, punctuation to clause breaks. */
function clausesOf(text: string): string[] {
  return text
    .toLowerCase()
    .normalize('NFD')
    .replace(/(\p{Script=Latin})\p{M}+/gu, '$1')
    .normalize('NFC')
    .replace(/['’`]/g, '')
    .replace(/-/g, ' ')
    .split(/[.,;:!¡…]+/)
    .map((clause) => clause.replace(/\s+/g, ' ').trim())
    .filter(Boolean);
}

export function isFarewell(text: string): boolean {
  if (/[?¿]/.test(text)) return false;
  const clauses = clausesOf(text);
  while (clauses.length > 1 && AROUND_CLAUSE.test(clauses.at(-1)!)) clauses.pop();
  const last = clauses.at(-1);
  return last !== undefined && FAREWELL_CLAUSE.test(last);
}
