// A 422's field problems (docs/api.md#error-types) as sentences a person can act on: known
// `type` codes say what to change in the form's own words; others fall back to the server's
// `msg`, without the raw field name in front.
import type { FieldProblem } from '../../http/errors.ts';

/** What the console's forms call the API's fields. */
const FIELD_NAMES: Record<string, string> = {
  name: 'the name',
  prompt: 'the prompt',
  image: 'the portrait photo',
  audio: 'the voice sample',
  voice_id: 'the preset voice',
  language: 'the language',
  email: 'the email',
  password: 'the password',
  current_password: 'the current password',
  new_password: 'the new password',
  url: 'the URL',
  description: 'the description',
};

/** Shown wherever a session would start in a language its identity's voice cannot speak. */
export const MULTILINGUAL_VOICE_NEEDED =
  'This identity’s voice speaks English only. Choose English as the language, or edit the identity and pick a multilingual preset voice or upload a voice sample.';

const capitalised = (text: string) => text.charAt(0).toUpperCase() + text.slice(1);
const asSentence = (text: string) => capitalised(text.trim()).replace(/([^.!?…])$/, '$1.');

/** The form field a problem is about (`['body', 'image']` → `image`), if any. */
export function fieldOf(problem: FieldProblem): string | null {
  const last = problem.loc[problem.loc.length - 1];
  return typeof last === 'string' && last !== 'body' ? last : null;
}

export function problemSentence(problem: FieldProblem): string {
  const field = fieldOf(problem);
  const named = field ? (FIELD_NAMES[field] ?? `the ${field.replace(/_/g, ' ')}`) : 'a value';
  const limit = /\d+/.exec(problem.msg)?.[0];
  switch (problem.type) {
    case 'multilingual_voice_required':
      return MULTILINGUAL_VOICE_NEEDED;
    case 'missing':
      return asSentence(`${named} is required`);
    case 'string_blank':
      return asSentence(`${named} cannot be blank`);
    case 'string_too_short':
      return asSentence(limit ? `${named} needs at least ${limit} characters` : `${named} is too short`);
    case 'string_too_long':
      return asSentence(limit ? `${named} can have at most ${limit} characters` : `${named} is too long`);
    case 'string_invalid_characters':
    case 'string_unsafe_character':
      return asSentence(`${named} contains characters that are not allowed (control characters): remove them`);
    case 'string_pattern_mismatch':
      return field === 'email' ? 'Enter a valid email address.' : asSentence(`${named} is not in the expected form`);
    case 'enum':
    case 'literal_error':
      return asSentence(`choose ${named} from the list`);
    case 'voice_conflict':
      return 'Choose either a voice sample or a preset voice, not both.';
    case 'unknown_voice':
      return 'That preset voice is not offered: choose one from the list.';
    case 'url_not_allowed':
      return asSentence(`this URL cannot receive webhooks: ${withoutField(problem.msg, field)}`);
    default:
      return asSentence(withoutField(problem.msg, field));
  }
}

/** `url: not a public address` → `not a public address`. */
function withoutField(message: string, field: string | null): string {
  return field && message.startsWith(`${field}: `) ? message.slice(field.length + 2) : message;
}
