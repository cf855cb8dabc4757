// Regenerates schema.d.ts, the typed client's types, from the service's own /openapi.json:
//   npm run client:generate
// A test (test/client/typed-client.test.ts) fails while the file differs from what this makes.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/server.ts';

export const SCHEMA_FILE = join(import.meta.dir, 'schema.d.ts');

const HEADER = `// Generated from the Likeness service's /openapi.json by openapi-typescript
// (npm run client:generate). Do not edit: regenerate.
`;

/** The contents schema.d.ts should have for this OpenAPI document. */
export async function clientTypesFor(document: object): Promise<string> {
  const ast = await openapiTS(document as Parameters<typeof openapiTS>[0], {
    alphabetize: true,
    // Uploads (the photo, the voice sample) are files: Blob, as FormData takes them, not string.
    transform: (schema) => (schema.format === 'binary' ? ts.factory.createTypeReferenceNode('Blob') : undefined),
  });
  return HEADER + astToString(ast);
}

/** The document as a service with embedded defaults serves it (no provider keys, no LiveKit needed). */
export async function currentDocument(): Promise<object> {
  const dataDir = await mkdtemp(join(tmpdir(), 'likeness-client-'));
  const env: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    LIKENESS_MODELS_DIR: process.env.LIKENESS_MODELS_DIR,
  };
  const config = loadConfig({
    ...env,
    HOST: '127.0.0.1',
    PORT: '0',
    DATA_DIR: dataDir,
    LIVEKIT_URL: 'ws://127.0.0.1:9',
    LIVEKIT_API_KEY: 'none',
    LIVEKIT_API_SECRET: 'unused-unused-unused-unused-unused',
  });
  const service = await startService(config);
  try {
    return (await (await fetch(`${service.url}/openapi.json`)).json()) as object;
  } finally {
    await service.stop();
    await rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.main) {
  await writeFile(SCHEMA_FILE, await clientTypesFor(await currentDocument()));
  console.log(`wrote ${SCHEMA_FILE}`);
}
