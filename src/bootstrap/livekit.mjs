// The LiveKit server of the embedded default (no LIVEKIT_URL): built from source with the
// machine's Go, once per pinned release, into a versioned folder of the machine's cache.
// Nothing is vendored into the repo: `go install module/pkg@tag` fetches the module and
// its dependencies through the Go module proxy, checked against the public checksum
// database. The children of the bootstrap find the binary in LIKENESS_LIVEKIT_BIN.
//
// The tag must be one whose go.mod has no replace directives (`go install pkg@version`
// refuses those); v1.13.6 and later replace pion's webrtc/dtls/ice with LiveKit forks.
import fs from 'node:fs';
import path from 'node:path';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { runChecked, runSync } from './processes.mjs';

export const LIVEKIT_SERVER_TAG = 'v1.13.5';
const MODULE = 'github.com/livekit/livekit-server';
/** The main package of the server (`go install` names its binary after the folder: `server`). */
const PACKAGE = `${MODULE}/cmd/server`;
const BINARY_NAME = 'livekit-server';
/** go.mod of the tag says `go 1.26`. */
const MIN_GO = [1, 26];
const HEARTBEAT_MS = 60_000;

/** The version the binary prints (`livekit-server version 1.13.5`), or null. */
function installedVersion(binary) {
  if (!fs.existsSync(binary)) return null;
  const match = runSync(binary, ['--version']).stdout.match(/version\s+v?(\S+)/);
  return match ? `v${match[1]}` : null;
}

/** The go command to use: GO, `go` on PATH, or the tarball's usual place. */
function findGo() {
  const candidates = [process.env.GO, 'go', '/usr/local/go/bin/go'].filter(Boolean);
  for (const go of candidates) {
    const probe = runSync(go, ['env', 'GOVERSION']);
    if (probe.status === 0) return { go, version: probe.stdout.trim() };
  }
  return null;
}

function goIsRecentEnough(version) {
  const match = version.match(/^go(\d+)\.(\d+)/);
  if (!match) return false;
  const [major, minor] = [Number(match[1]), Number(match[2])];
  return major > MIN_GO[0] || (major === MIN_GO[0] && minor >= MIN_GO[1]);
}

/**
 * Builds the pinned LiveKit server if the cache does not hold it yet, exports its path
 * as LIKENESS_LIVEKIT_BIN, and returns that absolute path.
 */
export async function ensureLivekitServer() {
  const binDir = path.join(cacheDir(), `livekit-server-${LIVEKIT_SERVER_TAG}`);
  const binary = path.join(binDir, BINARY_NAME);

  if (installedVersion(binary) !== LIVEKIT_SERVER_TAG) {
    const found = findGo();
    const needed = `Go ${MIN_GO.join('.')} or newer`;
    if (!found) {
      throw new Error(
        `building the local LiveKit server needs ${needed}, and no \`go\` was found on PATH (nor /usr/local/go/bin/go). ` +
          'Install Go (https://go.dev/dl/), or set GO to its go command; for `npm start`, LIVEKIT_URL ' +
          '(with LIVEKIT_API_KEY and LIVEKIT_API_SECRET) selects an external LiveKit server instead.',
      );
    }
    if (!goIsRecentEnough(found.version)) {
      throw new Error(
        `building LiveKit server ${LIVEKIT_SERVER_TAG} needs ${needed}, but ${found.go} is ${found.version}. ` +
          'Install a newer Go (https://go.dev/dl/), or set GO to its go command.',
      );
    }

    const startedAt = performance.now();
    log(
      `building LiveKit server ${LIVEKIT_SERVER_TAG} with ${found.version} into ${binDir} (first time only; ~5 min on 2 cores)…`,
    );
    // go install writes into a folder of its own, so the final path only ever holds a
    // whole binary, even when two bootstraps build at once.
    fs.mkdirSync(binDir, { recursive: true });
    const staging = fs.mkdtempSync(path.join(binDir, '.build-'));
    const heartbeat = setInterval(
      () => log(`still building LiveKit server… (${secondsSince(startedAt)})`),
      HEARTBEAT_MS,
    );
    try {
      await runChecked(found.go, ['install', `${PACKAGE}@${LIVEKIT_SERVER_TAG}`], {
        cwd: cacheDir(), // outside any Go module: `pkg@version` builds the tag's own go.mod
        env: {
          ...process.env,
          GOBIN: staging,
          GOTOOLCHAIN: 'local', // never download a Go toolchain
          CGO_ENABLED: '0', // as LiveKit's own Dockerfile: no C compiler needed
          GO111MODULE: 'on',
        },
      });
      fs.renameSync(path.join(staging, 'server'), binary);
    } finally {
      clearInterval(heartbeat);
      fs.rmSync(staging, { recursive: true, force: true });
    }
    const version = installedVersion(binary);
    if (version !== LIVEKIT_SERVER_TAG) {
      throw new Error(
        `after go install, ${binary} reports version ${JSON.stringify(version)}, expected ${LIVEKIT_SERVER_TAG}`,
      );
    }
    log(`LiveKit server ${LIVEKIT_SERVER_TAG} built (${secondsSince(startedAt)})`);
  }

  process.env.LIKENESS_LIVEKIT_BIN = binary;
  return binary;
}
