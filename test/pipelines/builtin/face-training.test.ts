// Training of the built-in pipeline (issue 5): the face found in real photos, the rules
// (no face, several faces, a face too small), the framings, rigs and textures it stores for
// each shape, and, through the real HTTP API, that a refused photo leaves nothing behind.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { eq } from 'drizzle-orm';
import sharp from 'sharp';
import { identities } from '../../../src/identities/schema.ts';
import { defaultUploadBounds, type InspectedImage, inspectImage } from '../../../src/media/index.ts';
import { type FoundFace, findFace, MIN_FACE_SIDE, type Point } from '../../../src/pipelines/builtin/face-detection.ts';
import { EYE_LINE, FACE_HEIGHT_SHARE, frameFace } from '../../../src/pipelines/builtin/framing.ts';
import { type BuiltinTraining, TRAINING_VERSION } from '../../../src/pipelines/builtin/index.ts';
import * as fx from '../../fixtures/index.ts';
import { expectMediaError } from '../../media/expect-media-error.ts';
import { localStoreWith } from '../../support/fakes/asset-store.ts';
import { file, form, type IdentityBody, identityForm } from '../../support/forms.ts';
import { startTestService, type TestService, waitForStatus } from '../../support/service.ts';
import { suiteServiceWithAccount } from '../../support/suite-service.ts';
import { eventually } from '../../support/visitor.ts';

// FaceMesh points (canonical topology) and human's iris points.
const FOREHEAD = 10;
const NOSE_TIP = 1;
const UPPER_LIP = 13;
const LOWER_LIP = 14;
const CHIN = 152;
const EYE_CORNERS = [33, 133, 362, 263];
const IRIS_CENTRES = [468, 473];

const inspect = (bytes: Uint8Array) => inspectImage(bytes, defaultUploadBounds);
/** The photos placed on a `width`×`height` picture, inspected as an upload. */
const collage = async (width: number, height: number, photos: fx.PlacedPhoto[]) =>
  inspect(await fx.photoCollage(width, height, photos));
const meanY = (face: { landmarks: Point[] }, indices: number[]) =>
  indices.reduce((sum, i) => sum + face.landmarks[i]![1], 0) / indices.length;
const centre = ([x, y, w, h]: number[]) => [x! + w! / 2, y! + h! / 2] as const;

/** The face's features from top to bottom, as on any upright face. */
function expectUprightFeatures(face: { landmarks: Point[] }) {
  const order = [[FOREHEAD], EYE_CORNERS, [NOSE_TIP], [UPPER_LIP, LOWER_LIP], [CHIN]].map((indices) =>
    meanY(face, indices),
  );
  expect(order).toEqual([...order].sort((a, b) => a - b));
  expect(order[4]! - order[0]!).toBeGreaterThan(20);
}

describe('finding the face', () => {
  test('astronaut.png: one face, in the upper middle, eyes above nose above mouth above chin', async () => {
    const face = await findFace(await inspect(fx.portraitPng()));
    expect(face.faces).toBe(1);
    expect(face.score).toBeGreaterThan(0.5);
    expect(face.landmarks).toHaveLength(478);
    const [x, y, w, h] = face.box;
    const [cx, cy] = centre(face.box);
    // The 512×512 portrait: her face is in the middle third across, in the upper half.
    expect(cx).toBeGreaterThan(512 / 3);
    expect(cx).toBeLessThan((2 * 512) / 3);
    expect(cy).toBeLessThan(512 / 2);
    expect(Math.min(w, h)).toBeGreaterThan(512 * 0.12);
    expect(Math.max(w, h)).toBeLessThan(512 * 0.4);
    expectUprightFeatures(face);
    // The image-left eye is left of the image-right one; each iris lies between its eye's corners.
    expect(face.landmarks[133]![0]).toBeLessThan(face.landmarks[362]![0]);
    const between = (v: number, a: number, b: number) => v > Math.min(a, b) && v < Math.max(a, b);
    expect(between(face.landmarks[IRIS_CENTRES[0]!]![0], face.landmarks[362]![0], face.landmarks[263]![0])).toBe(true);
    expect(between(face.landmarks[IRIS_CENTRES[1]!]![0], face.landmarks[33]![0], face.landmarks[133]![0])).toBe(true);
    for (const [px, py] of face.landmarks) {
      expect(px).toBeGreaterThanOrEqual(x);
      expect(px).toBeLessThanOrEqual(x + w);
      expect(py).toBeGreaterThanOrEqual(y);
      expect(py).toBeLessThanOrEqual(y + h);
    }
  });

  test('cameraman.png (greyscale, in profile): one face, on his head left of the camera', async () => {
    const face = await findFace(await inspect(fx.cameramanPng()));
    expect(face.faces).toBe(1);
    const [cx, cy] = centre(face.box);
    // His head is left of centre in the upper half; the camera is right of x ≈ 280.
    expect(cx).toBeGreaterThan(150);
    expect(cx).toBeLessThan(280);
    expect(cy).toBeGreaterThan(80);
    expect(cy).toBeLessThan(256);
    expectUprightFeatures(face);
  });

  test('no-face.jpg (a rocket launch) has no face', async () => {
    const error = await expectMediaError(findFace(await inspect(fx.noFaceJpeg())), {
      status: 422,
      type: 'image.no_face',
      field: 'image',
    });
    expect(error.message).toStartWith('No face found in the image');
  });

  test('several faces: the largest is chosen, wherever it stands', async () => {
    // The astronaut large on the left, the cameraman small on the right…
    const astronautLarge = await findFace(
      await collage(960, 640, [
        { photo: 'astronaut', size: 640, left: 0, top: 0 },
        { photo: 'cameraman', size: 320, left: 640, top: 160 },
      ]),
    );
    expect(astronautLarge.faces).toBe(2);
    expect(centre(astronautLarge.box)[0]).toBeLessThan(640);
    // …and the cameraman large on the left, the astronaut (the more confident detection) smaller on the right.
    const cameramanLarge = await findFace(
      await collage(1020, 640, [
        { photo: 'cameraman', size: 640, left: 0, top: 0 },
        { photo: 'astronaut', size: 380, left: 640, top: 130 },
      ]),
    );
    expect(cameramanLarge.faces).toBe(2);
    expect(cameramanLarge.box[0] + cameramanLarge.box[2]).toBeLessThan(640);
    // Same people, both found: the choice followed the size.
    expect(cameramanLarge.box[3]).toBeGreaterThan(astronautLarge.box[3] * 0.5);
  });

  test(`a face under ${MIN_FACE_SIDE} px is too small; just above it is enough`, async () => {
    const small = await collage(640, 640, [{ photo: 'astronaut', size: 280, left: 170, top: 100 }]);
    const error = await expectMediaError(findFace(small), {
      status: 422,
      type: 'image.face_too_small',
      field: 'image',
    });
    expect(error.message).toContain(`${MIN_FACE_SIDE} pixels`);
    const enough = await findFace(await collage(640, 640, [{ photo: 'astronaut', size: 400, left: 120, top: 100 }]));
    expect(Math.max(enough.box[2], enough.box[3])).toBeGreaterThanOrEqual(MIN_FACE_SIDE);
  });

  test('a large photo is searched on a scaled copy; the face comes back in its own pixels', async () => {
    const small = await findFace(await inspect(fx.portraitPng()));
    const large = await findFace(
      await inspect(new Uint8Array(await sharp(fx.portraitPng()).resize(2048, 2048).png().toBuffer())),
    );
    for (let i = 0; i < 4; i++) expect(Math.abs(large.box[i]! - small.box[i]! * 4)).toBeLessThan(24);
  });
});

describe('framing', () => {
  const photos: Record<string, Promise<{ image: InspectedImage; face: FoundFace }>> = {};
  const sources = { astronaut: fx.portraitPng, cameraman: fx.cameramanPng, headshot: fx.tightHeadshotPng };
  const analysed = (name: keyof typeof sources) =>
    (photos[name] ??= (async () => {
      const image = await inspect(await sources[name]());
      return { image, face: await findFace(image) };
    })());
  const luma = (rgb: Uint8Array, width: number, [x, y]: Point, radius: number) => {
    let sum = 0;
    let n = 0;
    for (let dy = -radius; dy <= radius; dy++) {
      for (let dx = -radius; dx <= radius; dx++) {
        // Pixel centres sit at index + 0.5, as in the landmarks.
        const o = ((Math.floor(y) + dy) * width + Math.floor(x) + dx) * 3;
        sum += 0.299 * rgb[o]! + 0.587 * rgb[o + 1]! + 0.114 * rgb[o + 2]!;
        n++;
      }
    }
    return sum / n;
  };

  test.each([
    ['astronaut', 'portrait', 540, 960],
    ['astronaut', 'landscape', 960, 540],
    ['cameraman', 'portrait', 540, 960],
    ['cameraman', 'landscape', 960, 540],
    // A tight, tilted 3:4 crop: levelled, and smaller than either frame.
    ['headshot', 'portrait', 540, 960],
    ['headshot', 'landscape', 960, 540],
  ] as const)(
    '%s, %s: %i×%i, the face inside it, placed by the rule, its landmarks on the photo’s features',
    async (name, shape, width, height) => {
      const { image, face } = await analysed(name);
      const framing = await frameFace(image, face, shape);
      expect([framing.width, framing.height]).toEqual([width, height]);
      expect(framing.rgb.length).toBe(width * height * 3);
      expect(framing.landmarks).toHaveLength(478);
      for (const [x, y] of framing.landmarks) {
        expect(x).toBeGreaterThan(0);
        expect(x).toBeLessThan(width);
        expect(y).toBeGreaterThan(0);
        expect(y).toBeLessThan(height);
      }
      const eyeLine = (framing.landmarks[33]![1] + framing.landmarks[263]![1]) / 2;
      expect(Math.abs(eyeLine - EYE_LINE * height)).toBeLessThan(3);
      const faceHeight = framing.landmarks[CHIN]![1] - framing.landmarks[FOREHEAD]![1];
      expect(Math.abs(faceHeight - FACE_HEIGHT_SHARE * height)).toBeLessThan(0.03 * height);
      // The landmarks moved with the pixels: around each landmark the framing looks like the photo
      // around it (3×3 photo pixels against the same area of the framing), and moving them by 2 %
      // of the face's height already makes it differ several times more.
      expect(image.pixels.channels).toBe(3);
      const scale = faceHeight / (face.landmarks[CHIN]![1] - face.landmarks[FOREHEAD]![1]);
      const mismatch = (shift: number) => {
        let sum = 0;
        face.landmarks.forEach((p, i) => {
          const [fx, fy] = framing.landmarks[i]!;
          const framed = luma(framing.rgb, width, [fx, fy + shift * faceHeight], Math.round(scale));
          sum += Math.abs(framed - luma(image.pixels.data, image.width, p, 1));
        });
        return sum / face.landmarks.length;
      };
      const aligned = mismatch(0);
      expect(aligned).toBeLessThan(6);
      expect(mismatch(0.02)).toBeGreaterThan(3 * aligned);
    },
  );

  // Beyond the photo's edge: backdrop.test.ts.
});

describe('training through the API', () => {
  const suite = suiteServiceWithAccount('pglite', { credits: 100_000, env: { CREDITS_ONBOARDING: '50' } });

  const create = (image: File, who = suite.account) =>
    who.call('POST', '/v1/identities', { body: form({ name: 'Ada', prompt: 'You are Ada.', image }) });
  const trainingOf = async (id: string) => {
    const [row] = await suite.service.services.database.db.select().from(identities).where(eq(identities.id, id));
    return row!.training as unknown as BuiltinTraining;
  };
  const stored = async (key: string) =>
    new Uint8Array(await (await suite.service.services.store.get(key))!.arrayBuffer());

  test('a portrait trains: the face, and per shape a framing, a rig and its textures, all stored', async () => {
    const response = await suite.account.call('POST', '/v1/identities', { body: await identityForm() }); // the astronaut, 1024×683 JPEG
    expect(response.status).toBe(200);
    const body = (await response.json()) as IdentityBody;
    const training = await trainingOf(body.identity_id);
    expect(training).toMatchObject({ pipeline: 'builtin', version: TRAINING_VERSION, face: { faces: 1 } });
    expect(training.face.score).toBeGreaterThan(0.5);
    const [cx, cy] = centre(training.face.box);
    expect(cx).toBeGreaterThan(1024 / 3);
    expect(cx).toBeLessThan((2 * 1024) / 3);
    expect(cy).toBeLessThan(683 / 2);

    const names = Object.keys(training.assets).sort();
    for (const shape of ['portrait', 'landscape']) {
      expect(names).toContain(`${shape}.image`);
      expect(names).toContain(`${shape}.rig`);
      expect(names.filter((n) => n.startsWith(`${shape}.texture.`)).length).toBeGreaterThan(0);
    }
    expect(names.every((n) => /^(portrait|landscape)\.(image|rig|texture\.[a-z0-9_-]+)$/.test(n))).toBe(true);
    const keys = await suite.service.assetKeys();
    for (const key of Object.values(training.assets)) {
      expect(key.startsWith(`identities/${body.identity_id}/`)).toBe(true);
      expect(keys).toContain(key);
    }

    for (const [shape, width, height] of [
      ['portrait', 540, 960],
      ['landscape', 960, 540],
    ] as const) {
      const framing = await sharp(await stored(training.assets[`${shape}.image`]!)).metadata();
      expect([framing.format, framing.width, framing.height]).toEqual(['jpeg', width, height]);
      const rig = JSON.parse(new TextDecoder().decode(await stored(training.assets[`${shape}.rig`]!))) as {
        width: number;
        height: number;
        mouth: { origin: Point };
        eyes: { origin: Point }[];
      };
      expect([rig.width, rig.height]).toEqual([width, height]);
      // The rig was built on this framing's face: mouth below the eyes, all inside the frame.
      for (const [x, y] of [rig.mouth.origin, ...rig.eyes.map((e) => e.origin)]) {
        expect(x).toBeGreaterThan(0);
        expect(x).toBeLessThan(width);
        expect(y).toBeGreaterThan(0);
        expect(y).toBeLessThan(height);
      }
      for (const eye of rig.eyes) expect(eye.origin[1]).toBeLessThan(rig.mouth.origin[1]);
      for (const name of names.filter((n) => n.startsWith(`${shape}.texture.`))) {
        const texture = await sharp(await stored(training.assets[name]!)).metadata();
        expect(texture.format).toBe('png');
      }
      // Served as what they are: the session's job fetches them over HTTP.
      for (const [name, type] of [
        [`${shape}.image`, 'image/jpeg'],
        [`${shape}.rig`, 'application/json'],
      ] as const) {
        const served = await fetch(suite.service.services.assetLinks.url(training.assets[name]!));
        expect([served.status, served.headers.get('content-type')]).toEqual([200, type]);
      }
    }
  });

  test.each([
    ['a photo with no face', () => fx.noFaceJpeg(), 'image.no_face', 'No face found in the image'],
    [
      'a face too small (the astronaut small on a large canvas)',
      () => fx.photoCollage(1024, 1024, [{ photo: 'astronaut', size: 256, left: 400, top: 300 }]),
      'image.face_too_small',
      'The face in the image is too small',
    ],
  ] as const)(
    '%s answers 422 in the spec’s shape; nothing is stored, no identity, no charge',
    async (_, bytes, type, msg) => {
      const payer = await suite.service.account({ credits: 500 });
      const filesBefore = await suite.service.assetKeys();
      const rowsBefore = await suite.service.count('identities');
      const response = await create(file(await bytes(), 'photo.bin'), payer);
      expect(response.status).toBe(422);
      const { detail } = (await response.json()) as { detail: { loc: string[]; msg: string; type: string }[] };
      expect(detail).toEqual([{ loc: ['body', 'image'], msg: expect.stringContaining(msg), type }]);
      expect(await suite.service.assetKeys()).toEqual(filesBefore);
      expect(await suite.service.count('identities')).toBe(rowsBefore);
      expect(await suite.service.services.ledger.balance(payer.accountId)).toBe(500);
      expect((await suite.service.services.ledger.entries(payer.accountId)).map((e) => e.kind)).toEqual(['grant']);
      expect(await (await payer.call('GET', '/v1/identities')).json()).toEqual([]);
    },
  );

  test('a photo of several people trains from the largest face', async () => {
    // The same person twice: small on the left, large on the right.
    const collage = await fx.photoCollage(812, 512, [
      { photo: 'astronaut', size: 300, left: 0, top: 100 },
      { photo: 'astronaut', size: 512, left: 300, top: 0 },
    ]);
    const response = await create(file(collage, 'group.png', 'image/png'));
    expect(response.status).toBe(200);
    const training = await trainingOf(((await response.json()) as IdentityBody).identity_id);
    expect(training.face.faces).toBe(2);
    expect(training.face.box[0]).toBeGreaterThan(300);
    // Her face in the 512 px copy is the size it is in the original photo.
    const original = await findFace(await inspect(fx.portraitPng()));
    expect(Math.abs(training.face.box[3] - original.box[3])).toBeLessThan(original.box[3] * 0.1);
  });

  test('a retrain with a face-less photo answers 422 and the identity keeps its training and files', async () => {
    const created = (await (await create(file(fx.portraitPng(), 'a.png', 'image/png'))).json()) as IdentityBody;
    const before = await trainingOf(created.identity_id);
    const filesBefore = await suite.service.assetKeys();
    const response = await suite.account.call('PATCH', `/v1/identities/${created.identity_id}`, {
      body: form({ prompt: 'New prompt', image: file(fx.noFaceJpeg(), 'rocket.jpg', 'image/jpeg') }),
    });
    expect(response.status).toBe(422);
    expect(await response.json()).toEqual({
      detail: [{ loc: ['body', 'image'], msg: expect.stringContaining('No face found'), type: 'image.no_face' }],
    });
    const after = (await (
      await suite.account.call('GET', `/v1/identities/${created.identity_id}`)
    ).json()) as IdentityBody;
    expect(after).toEqual(created); // status ready, same prompt, same image
    expect(await trainingOf(created.identity_id)).toEqual(before);
    expect(await suite.service.assetKeys()).toEqual(filesBefore);
  });

  test('a retrain with a new photo replaces the training: the old framings, rigs and textures are deleted', async () => {
    const created = (await (await create(file(fx.portraitPng(), 'a.png', 'image/png'))).json()) as IdentityBody;
    const before = await trainingOf(created.identity_id);
    const response = await suite.account.call('PATCH', `/v1/identities/${created.identity_id}`, {
      body: form({ prompt: 'New prompt', image: file(fx.cameramanPng(), 'b.png', 'image/png') }),
    });
    expect(response.status).toBe(202);
    await waitForStatus(suite.account, created.identity_id, 'ready');
    const after = await trainingOf(created.identity_id);
    expect(after.face.box).not.toEqual(before.face.box);
    // The old files serve until the switch to ready and are deleted right after it: nothing of
    // the old training's folder is left.
    const oldFolder = before.assets['portrait.image']!.replace(/[^/]+$/, '');
    await eventually(
      async () => (await suite.service.assetKeys()).every((k) => !k.startsWith(oldFolder)),
      5_000,
      'the old training to be deleted',
    );
    const keys = await suite.service.assetKeys();
    for (const key of Object.values(after.assets)) expect(keys).toContain(key);
    for (const key of Object.values(before.assets)) expect(keys).not.toContain(key);
  });
});

describe('a storage failure in the middle of training', () => {
  let service: TestService;
  beforeAll(async () => {
    // One landscape file fails at once while the other landscape files are still being written
    // (slowly): those must not land after the cleanup.
    const slowAndFailing = await localStoreWith((inner) => ({
      put: async (key, bytes, type) => {
        if (key.endsWith('landscape.rig.json')) throw new Error('disk full');
        if (key.includes('landscape')) await Bun.sleep(300);
        return inner.put(key, bytes, type);
      },
    }));
    service = await startTestService('pglite', { overrides: { store: slowAndFailing } });
  });
  afterAll(() => service.stop());

  test('leaves no file, no identity and no charge', async () => {
    const account = await service.account({ credits: 500 });
    const response = await account.call('POST', '/v1/identities', { body: await identityForm() });
    expect(response.status).toBe(500);
    expect(await service.assetKeys()).toEqual([]);
    await Bun.sleep(500); // any write still in flight would have landed by now
    expect(await service.assetKeys()).toEqual([]);
    expect(await service.count('identities')).toBe(0);
    expect(await service.services.ledger.balance(account.accountId)).toBe(500);
  });
});
