// Issue 46: a smile that already shows its teeth opens where the teeth are. Checked by the lips'
// colour (lower-lip-colour.ts), not by the landmark model that misplaced them: no dark crescent
// inside the lower lip under a band of lip, nothing turned dark above the photo's teeth. The faces are the ones today's survey
// (bench/renderer/smiles.ts) flagged before the lower lip's edge was read from the pixels, and
// faces it passed, which must keep passing.
import { describe, expect, test } from 'bun:test';
import { secondMouthVerdict } from './lower-lip-colour.ts';
import { smilePhoto } from './smile-photos.ts';
import { heldFrames, serveUpload } from './stranger-face.ts';
import { strangerPhoto } from './stranger-photos.ts';

/** A second mouth on each of these before the fix (5 of the survey's 39). */
const FLAGGED_BEFORE = [
  'grid-3-5-lipstick-tilted',
  'grid-3-8-lipstick',
  'grid-4-3-cool',
  'grid-4-13-lipstick-tilted',
  'grid-5-3-lipstick',
];
/** Passed before, the closest to the line among them included (grid-5-9: 102 px, grid-3-7: 54). */
const PASSED_BEFORE = [
  'grid-2-16-large',
  'grid-3-7-tilted-cw-15',
  'grid-5-9-tilted-cw-30',
  'astronaut-lipstick-tilted',
];

async function verdictOf(photo: Uint8Array) {
  const face = await serveUpload(photo);
  try {
    const { neutral, spoken } = await heldFrames(face);
    const verdict = secondMouthVerdict(
      neutral,
      spoken.map(({ frame }) => frame),
      face.rigs.portrait.mouth,
    );
    const worst = verdict.counts[verdict.worst]!;
    return {
      measured: verdict.unmeasured === null,
      secondMouth: verdict.fails ? `${worst.secondMouth} px at ${spoken[verdict.worst]!.label}` : 'none',
      aboveTeeth: verdict.aboveTeeth,
      mouth: face.rigs.portrait.mouth,
    };
  } finally {
    await face.stop();
  }
}

describe('a smile with teeth opens under its teeth, never inside the lower lip', () => {
  test.each([...FLAGGED_BEFORE, ...PASSED_BEFORE])('%s', async (name) => {
    const { measured, secondMouth } = await verdictOf(await smilePhoto(name));
    expect({ measured, secondMouth }).toEqual({ measured: true, secondMouth: 'none' });
  });

  test('teeth below the mouth the landmarks drew: it opens under them, less wide, nothing dark over them', async () => {
    // The landmarks put the whole mouth above this photo's teeth (a dark sleeve hides its chin):
    // speaking opened a gap in the upper lip (0 + 243 px over the teeth before).
    const { measured, secondMouth, aboveTeeth, mouth } = await verdictOf(await smilePhoto('grid-5-6-tilted-ccw-20'));
    expect({ measured, secondMouth, aboveTeeth }).toEqual({ measured: true, secondMouth: 'none', aboveTeeth: 0 });
    expect(mouth.maxOpen / (mouth.corners[1] - mouth.corners[0])).toBeCloseTo(0.7 * 0.22, 2);
  });

  test('unsure where the lower lip starts, the face opens less; closed lips open as before', async () => {
    // smiling-tilted-left: parted lips whose lower edge the columns do not agree on; glasses: closed lips.
    const unsure = (await verdictOf(await strangerPhoto('smiling-tilted-left'))).mouth;
    const closed = (await verdictOf(await strangerPhoto('glasses'))).mouth;
    const perWidth = (mouth: typeof unsure) => mouth.maxOpen / (mouth.corners[1] - mouth.corners[0]);
    expect(perWidth(closed)).toBeCloseTo(0.22, 2);
    expect(perWidth(unsure)).toBeCloseTo(0.7 * 0.22, 2);
  });
});
