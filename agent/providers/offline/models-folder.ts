// The models folder the bootstrap fills (src/bootstrap/models.mjs): its manifest, and
// node-llama-cpp opened on GGUF files from it. Apart from index.ts so that the sentence reader
// alone (sentence-end.ts) loads without the rest of the offline models' code.
import { readFile } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { importNodeLlamaCpp, type Llama, type LlamaModel } from './llama.ts';

/** What the bootstrap wrote into the models folder (paths relative to it). */
export interface Manifest {
  layout: number;
  python: string;
  whisper: { en: string; multilingual: string };
  /** The replies' model (GGUF). */
  llm: string;
  /** The end-of-turn reader's model (GGUF), calibrated on SmolLM2-135M (sentence-end.ts). */
  reader: string;
  nodeLlamaCpp: string;
  piper: { model: string; config: string };
}

/** The bootstrap's LAYOUT_VERSION (2: Piper's model patched for phoneme timing; 3: a reply model beside the reader; 4: the documents' embedding model, not read here). */
const MANIFEST_LAYOUT = 4;

export async function readManifest(modelsDir: string): Promise<Manifest> {
  const file = join(modelsDir, 'manifest.json');
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(file, 'utf8')) as Manifest;
  } catch (error) {
    throw new Error(
      `the offline models are not installed in ${modelsDir} (${(error as Error).message}); ` +
        '`npm start` and `npm test` install them (src/bootstrap/models.mjs), or set LIKENESS_MODELS_DIR',
    );
  }
  if (manifest.layout !== MANIFEST_LAYOUT)
    throw new Error(`${file} has layout ${manifest.layout}, expected ${MANIFEST_LAYOUT}: run the bootstrap again`);
  return manifest;
}

/** The manifest's paths are relative to the models folder unless absolute. */
export function inModelsDir(modelsDir: string, path: string): string {
  return isAbsolute(path) ? path : join(modelsDir, path);
}

/** node-llama-cpp and the given GGUF files on one instance (one thread budget); `release` frees them all. */
export async function openLanguageModels(manifest: Manifest, modelsDir: string, files: string[]) {
  const llamaCpp = await importNodeLlamaCpp(pathToFileURL(inModelsDir(modelsDir, manifest.nodeLlamaCpp)).href);
  // build 'never': only the prebuilt CPU binaries the bootstrap installed, no download or compile.
  const llama: Llama = await llamaCpp.getLlama({
    gpu: false,
    build: 'never',
    logLevel: llamaCpp.LlamaLogLevel.error,
    progressLogs: false,
  });
  const models: LlamaModel[] = [];
  const release = async () => {
    for (const model of models) await model.dispose();
    await llama.dispose();
  };
  try {
    for (const file of files) models.push(await llama.loadModel({ modelPath: inModelsDir(modelsDir, file) }));
  } catch (error) {
    await release();
    throw error;
  }
  return { llamaCpp, llama, models, release };
}
