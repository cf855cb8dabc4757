import { expect } from 'bun:test';
import { MediaError, type MediaErrorStatus, type MediaErrorType, type MediaField } from '../../src/media/index.ts';

/** Awaits `promise`, asserts it rejected with a MediaError of this status/type/field, and returns the error. */
export async function expectMediaError(
  promise: Promise<unknown>,
  expected: { status: MediaErrorStatus; type: MediaErrorType; field: MediaField },
): Promise<MediaError> {
  const error = await promise.then(
    (value) => {
      throw new Error(`expected a MediaError ${expected.status} ${expected.type}, but it resolved: ${describe(value)}`);
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(MediaError);
  const mediaError = error as MediaError;
  expect({ status: mediaError.status, type: mediaError.type, field: mediaError.field }).toEqual(expected);
  // Messages are shown to uploaders: they must say something.
  expect(mediaError.message.length).toBeGreaterThan(15);
  return mediaError;
}

function describe(value: unknown): string {
  if (value && typeof value === 'object') {
    const { kind, width, height, durationSeconds } = value as Record<string, unknown>;
    return JSON.stringify({ kind, width, height, durationSeconds });
  }
  return String(value);
}
