// Helm, for the chart's tests (test/deploy/helm-chart.test.ts lints and renders
// deploy/helm/likeness): built from its Go module with the machine's Go, once per pinned
// release, into a versioned folder of the machine's cache, as the LiveKit server is
// (livekit.mjs). `go install module/pkg@tag` fetches through the Go module proxy, checked
// against the public checksum database; nothing else is downloaded.
//
// The ldflags are those of Helm's Makefile: without them the binary calls itself "v3.22" and
// renders for Kubernetes 1.20 (its fallback), which a chart's kubeVersion may refuse.
import fs from 'node:fs';
import path from 'node:path';
import { withInstallLock } from './install-lock.mjs';
import { log, secondsSince } from './log.mjs';
import { cacheDir } from './paths.mjs';
import { runChecked, runSync } from './processes.mjs';

/** The latest v3 whose go.mod has no replace directives and asks for Go ≤ 1.26 (`go 1.26.0`). */
export const HELM_TAG = 'v3.22.0';
const MODULE = 'helm.sh/helm/v3';
const PACKAGE = `${MODULE}/cmd/helm`;
const MIN_GO = [1, 26];
const HEARTBEAT_MS = 60_000;

/** The version the binary reports (`v3.22.0`), or null. */
function installedVersion(binary) {
  if (!fs.existsSync(binary)) return null;
  const result = runSync(binary, ['version', '--template', '{{.Version}}']);
  return result.status === 0 ? result.stdout.trim() : null;
}

/** The go command: GO, `go` on PATH, or the tarball's usual place; refused when older than MIN_GO. */
function findGo() {
  for (const go of [process.env.GO, 'go', '/usr/local/go/bin/go'].filter(Boolean)) {
    const probe = runSync(go, ['env', 'GOVERSION']);
    if (probe.status !== 0) continue;
    const version = probe.stdout.trim();
    const [, major, minor] = version.match(/^go(\d+)\.(\d+)/) ?? [];
    if (Number(major) > MIN_GO[0] || (Number(major) === MIN_GO[0] && Number(minor) >= MIN_GO[1]))
      return { go, version };
    throw new Error(`building Helm ${HELM_TAG} needs Go ${MIN_GO.join('.')} or newer, but ${go} is ${version}`);
  }
  throw new Error(
    `building Helm ${HELM_TAG} needs Go ${MIN_GO.join('.')} or newer, and no \`go\` was found on PATH (nor /usr/local/go/bin/go); set GO to its go command`,
  );
}

/** Kubernetes' minor version the tag is built against: k8s.io/client-go v0.N in its go.mod means 1.N. */
function kubernetesMinor(go, env) {
  const download = runSync(go, ['mod', 'download', '-json', `${MODULE}@${HELM_TAG}`], { cwd: cacheDir(), env });
  if (download.status !== 0) throw new Error(`go mod download ${MODULE}@${HELM_TAG} failed: ${download.stderr}`);
  const goMod = fs.readFileSync(JSON.parse(download.stdout).GoMod, 'utf8');
  const match = goMod.match(/^\s*k8s\.io\/client-go v0\.(\d+)\./m);
  if (!match) throw new Error(`${MODULE}@${HELM_TAG}'s go.mod names no k8s.io/client-go`);
  return match[1];
}

async function build(binDir, binary) {
  const found = findGo();
  const startedAt = performance.now();
  log(`building Helm ${HELM_TAG} with ${found.version} into ${binDir} (first time only; a few minutes on 2 cores)…`);
  const env = {
    ...process.env,
    GOTOOLCHAIN: 'local', // never download a Go toolchain
    CGO_ENABLED: '0',
    GO111MODULE: 'on',
  };
  const minor = kubernetesMinor(found.go, env);
  const ldflags = [
    '-s -w',
    `-X ${MODULE}/internal/version.version=${HELM_TAG}`,
    `-X ${MODULE}/internal/version.metadata=`,
    ...['pkg/lint/rules', 'pkg/chartutil'].flatMap((pkg) => [
      `-X ${MODULE}/${pkg}.k8sVersionMajor=1`,
      `-X ${MODULE}/${pkg}.k8sVersionMinor=${minor}`,
    ]),
  ].join(' ');
  // go install writes into a folder of its own: the final path only ever holds a whole binary.
  const staging = fs.mkdtempSync(path.join(binDir, '.build-'));
  const heartbeat = setInterval(() => log(`still building Helm… (${secondsSince(startedAt)})`), HEARTBEAT_MS);
  try {
    await runChecked(found.go, ['install', '-trimpath', `-ldflags=${ldflags}`, `${PACKAGE}@${HELM_TAG}`], {
      cwd: cacheDir(), // outside any Go module: `pkg@version` builds the tag's own go.mod
      env: { ...env, GOBIN: staging },
    });
    fs.renameSync(path.join(staging, 'helm'), binary);
  } finally {
    clearInterval(heartbeat);
    fs.rmSync(staging, { recursive: true, force: true });
  }
  log(`Helm ${HELM_TAG} built (${secondsSince(startedAt)})`);
}

/** Builds the pinned Helm if the cache does not hold it yet; returns the binary's absolute path. */
export async function ensureHelm() {
  const binDir = path.join(cacheDir(), `helm-${HELM_TAG}`);
  const binary = path.join(binDir, 'helm');
  if (installedVersion(binary) === HELM_TAG) return binary;
  fs.mkdirSync(binDir, { recursive: true });
  await withInstallLock(`${binDir}.lock`, `Helm ${HELM_TAG}`, async () => {
    if (installedVersion(binary) === HELM_TAG) return; // built by the bootstrap we waited for
    await build(binDir, binary);
  });
  const version = installedVersion(binary);
  if (version !== HELM_TAG)
    throw new Error(`after go install, ${binary} reports version ${JSON.stringify(version)}, expected ${HELM_TAG}`);
  return binary;
}

const HELM_SUITE = 'test/deploy/helm-chart.test.ts';

/** Whether a test run with these arguments runs the Helm suite: every suite, or a path that holds it. */
export function runsHelmSuite(args) {
  const paths = args
    .filter((arg) => /^(\.\/)?test(\/|$)/.test(arg))
    .map((arg) => arg.replace(/^\.\//, '').replace(/\/$/, ''));
  return paths.length === 0 || paths.some((path) => HELM_SUITE.startsWith(path));
}
