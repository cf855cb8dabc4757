// Checks of identity forms beyond their schema's shape: blank or garbled text, unknown
// pipelines, and media problems turned into error bodies (docs/api.md#errors).
import { controlCharacters } from '../http/control-characters.ts';
import { ApiError, type FieldProblem } from '../http/errors.ts';
import { MediaError } from '../media/index.ts';
import type { Pipeline } from '../pipelines/index.ts';

// Also a session's context, greeting and recording notice (sessions/start.ts).
export const CONTROL_OR_REPLACEMENT = controlCharacters('tab and line breaks', { undecoded: true });
const NAME_FORBIDDEN = controlCharacters('none', { undecoded: true });

export function textProblems(fields: { name?: string; prompt?: string }): FieldProblem[] {
  const problems: FieldProblem[] = [];
  for (const [field, forbidden] of [
    ['name', NAME_FORBIDDEN],
    ['prompt', CONTROL_OR_REPLACEMENT],
  ] as const) {
    const text = fields[field];
    if (text === undefined) continue;
    if (!text.trim()) problems.push({ loc: ['body', field], msg: `${field} must not be blank`, type: 'string_blank' });
    else if (forbidden.test(text)) {
      problems.push({
        loc: ['body', field],
        msg: `${field} must be valid UTF-8 text without control characters`,
        type: 'string_invalid_characters',
      });
    }
  }
  return problems;
}

export function unknownPipeline(pipelineId: string, known: string[]): FieldProblem {
  return {
    loc: ['body', 'pipeline_id'],
    msg: `Unknown pipeline "${pipelineId.slice(0, 100)}"; known: ${known.join(', ')}`,
    type: 'unknown_pipeline',
  };
}

/** `provider_avatar_id` against the pipeline: required by some, refused by those without provider avatars. */
export function providerAvatarProblems(
  pipeline: Pipeline | undefined,
  providerAvatarId: string | undefined,
): FieldProblem[] {
  if (!pipeline) return [];
  const loc = ['body', 'provider_avatar_id'];
  if (providerAvatarId !== undefined && !pipeline.providerAvatars) {
    return [{ loc, msg: `Pipeline "${pipeline.id}" takes no provider_avatar_id`, type: 'unsupported_field' }];
  }
  if (providerAvatarId === undefined && pipeline.providerAvatars?.required) {
    return [
      {
        loc,
        msg: `Pipeline "${pipeline.id}" needs provider_avatar_id: the provider's avatar to animate`,
        type: 'missing',
      },
    ];
  }
  return [];
}

export function throwIfProblems(problems: FieldProblem[]): void {
  if (problems.length) throw new ApiError(422, problems);
}

/** Media problems keep their status: 413 and 415 carry a message, 422 the field list. */
export function asApiError(error: unknown): unknown {
  if (!(error instanceof MediaError)) return error;
  if (error.status === 422)
    return new ApiError(422, [{ loc: ['body', error.field], msg: error.message, type: error.type }]);
  return new ApiError(error.status, `${error.field}: ${error.message}`);
}
