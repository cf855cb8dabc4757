// HTTPS beside plain HTTP (issue 29, docs/api.md#reaching-the-service): the same API on TLS_PORT,
// with a certificate made and kept in DATA_DIR/tls for this host's names and addresses, or the
// operator's. A client that came in over HTTPS is given https asset links and a wss rtc_url on
// the host it used; one on the plain port gets the usual addresses. `serve` prints the https
// address to open and what a browser says about the self-made certificate, and a SIGTERM to its
// whole process group (Ctrl-C in a terminal) stops it without LiveKit being taken for crashed.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { loadConfig } from '../../src/config.ts';
import { freeTcpPort } from '../../src/livekit/local-ports.ts';
import { createAstronaut, startSession } from '../avatar/support.ts';
import { seededDataDir } from '../support/database-templates.ts';
import { collectOutput, tempDir } from '../support/processes.ts';
import { startTestService, type TestAccount, type TestService } from '../support/service.ts';
import { eventually } from '../support/visitor.ts';

const CLI = join(import.meta.dir, '../../src/cli/index.ts');

describe('the HTTPS listener with a self-made certificate', () => {
  let service: TestService;
  let account: TestAccount;
  let secure = '';
  let ca = '';
  const fetchSecure = (path: string, init: RequestInit = {}) =>
    fetch(`${secure}${path}`, { ...init, tls: { ca } } as RequestInit);

  beforeAll(async () => {
    service = await startTestService('pglite', {
      livekit: 'local',
      env: { TLS_PORT: String(await freeTcpPort('127.0.0.1')) },
    });
    secure = `https://127.0.0.1:${service.config.tls!.port}`;
    ca = service.secure!.certificate.cert;
    account = await service.account({ credits: 10_000 });
  }, 60_000);
  afterAll(() => service?.stop());

  test("the certificate is valid for this host's names and addresses, and a client trusting it verifies the listener", async () => {
    const certificate = new X509Certificate(ca);
    const names = certificate.subjectAltName ?? '';
    for (const subject of ['DNS:localhost', 'IP Address:127.0.0.1']) expect(names).toContain(subject);
    expect(service.secure!.certificate.selfMade).toBe(true);
    expect((await fetchSecure('/healthz')).status).toBe(200);
    // Kept in the data folder, for the next start.
    expect(readFileSync(join(service.dataDir, 'tls', 'self-made.json'), 'utf8')).toContain(
      certificate.fingerprint256 ? 'BEGIN CERTIFICATE' : '',
    );
    // Without trusting it, a client refuses it (it is self-made).
    expect(
      await fetch(`${secure}/healthz`).then(
        () => 'accepted',
        () => 'refused',
      ),
    ).toBe('refused');
  });

  test('a client that came in over HTTPS gets https asset links and a wss rtc_url on the host it used; over HTTP the usual ones', async () => {
    const form = async () => {
      const { identityForm } = await import('../support/forms.ts');
      return identityForm({ language: 'en' });
    };
    const created = await fetchSecure('/v1/identities', {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}` },
      body: await form(),
    });
    expect(created.status).toBe(200);
    const identity = (await created.json()) as { identity_id: string; image: string };
    expect(identity.image.startsWith(`${secure}/assets/`)).toBe(true);
    // The link works over HTTPS.
    const image = await fetchSecure(identity.image.slice(secure.length));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\//);
    const plain = (await (await account.call('GET', `/v1/identities/${identity.identity_id}`)).json()) as {
      image: string;
    };
    expect(plain.image.startsWith(`${service.config.assetsUrl}/`)).toBe(true);

    const started = await fetchSecure('/v1/sessions/start', {
      method: 'POST',
      headers: { authorization: `Bearer ${account.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    });
    const session = (await started.json()) as { rtc_url: string; room_name: string };
    expect(session.rtc_url).toBe(`wss://127.0.0.1:${service.config.tls!.port}`);
    const other = await startSession(account, {});
    expect(other.rtc_url).toBe(service.services.livekit.publicUrl);
    for (const id of [session.room_name, other.room_name]) await account.call('POST', `/v1/sessions/${id}/end`);
  }, 60_000);

  test('LiveKit signalling comes through the HTTPS listener too: the /rtc validate probe answers over TLS', async () => {
    const identity = await createAstronaut(account, { language: 'en' });
    const session = await startSession(account, { identity_id: identity.identity_id });
    expect((await fetchSecure(`/rtc/validate?access_token=${session.token}`)).status).toBe(200);
    await account.call('POST', `/v1/sessions/${session.room_name}/end`);
  }, 30_000);

  test('a restart on the same data folder serves the same certificate; a new address makes a new one', async () => {
    const { certificateFor } = await import('../../src/tls/certificate.ts');
    const settings = service.config.tls!;
    const subjects = service.secure!.certificate.subjects;
    const again = await certificateFor(settings, service.dataDir, subjects);
    expect(again.cert).toBe(ca);
    const moved = await certificateFor(settings, service.dataDir, [...subjects, '198.51.100.7']);
    expect(moved.cert).not.toBe(ca);
    expect(new X509Certificate(moved.cert).subjectAltName).toContain('IP Address:198.51.100.7');
  });
});

describe('the operator’s certificate and the settings', () => {
  test('TLS_CERT_FILE and TLS_KEY_FILE are served as given', async () => {
    const dirs: string[] = [];
    const dir = await tempDir(dirs, 'likeness-tls-');
    const made = await generate([{ name: 'commonName', value: 'likeness.test' }], {
      keySize: 2048,
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: 'likeness.test' }] }],
    });
    await writeFile(join(dir, 'cert.pem'), made.cert);
    await writeFile(join(dir, 'key.pem'), made.private);
    const service = await startTestService('pglite', {
      env: {
        TLS_PORT: String(await freeTcpPort('127.0.0.1')),
        TLS_CERT_FILE: join(dir, 'cert.pem'),
        TLS_KEY_FILE: join(dir, 'key.pem'),
      },
    });
    try {
      expect(service.secure!.certificate.selfMade).toBe(false);
      const url = `https://127.0.0.1:${service.config.tls!.port}/healthz`;
      // Verified against the name it was made for, reached at an address.
      expect((await fetch(url, { tls: { ca: made.cert, serverName: 'likeness.test' } } as RequestInit)).status).toBe(
        200,
      );
      expect(
        await fetch(url, { tls: { ca: made.cert, serverName: 'other.test' } } as RequestInit).then(
          () => 'accepted',
          () => 'refused',
        ),
      ).toBe('refused');
    } finally {
      await service.stop();
      for (const d of dirs) await rm(d, { recursive: true, force: true });
    }
  }, 60_000);

  test('on by default (8443) unless the service listens on loopback alone; 0 turns it off; a certificate needs its key', () => {
    expect(loadConfig({}).tls).toMatchObject({
      port: 8443,
      certFile: undefined,
      addressesFollowRequest: { assets: true, rtc: true },
    });
    expect(loadConfig({ HOST: '127.0.0.1' }).tls).toBeUndefined();
    expect(loadConfig({ HOST: '127.0.0.1', TLS_PORT: '9443' }).tls?.port).toBe(9443);
    expect(loadConfig({ TLS_PORT: '0' }).tls).toBeUndefined();
    expect(loadConfig({ PUBLIC_URL: 'https://likeness.example' }).tls?.addressesFollowRequest).toEqual({
      assets: false,
      rtc: false,
    });
    expect(() => loadConfig({ TLS_CERT_FILE: '/x/cert.pem' })).toThrow('TLS_CERT_FILE and TLS_KEY_FILE go together');
  });

  test('a taken TLS_PORT stops the start with a message naming it', async () => {
    const taken = Bun.serve({ port: 0, hostname: '127.0.0.1', fetch: () => new Response() });
    try {
      const failure = await startTestService('pglite', { env: { TLS_PORT: String(taken.port) } }).then(
        async (service) => {
          await service.stop();
          return 'started';
        },
        (error: Error) => error.message,
      );
      expect(failure).toContain(`TLS_PORT ${taken.port} (HTTPS) is taken`);
    } finally {
      taken.stop(true);
    }
  }, 30_000);
});

test('`serve` prints the https address to open and the browser’s warning; a SIGTERM to its process group stops it without restarting LiveKit', async () => {
  const dirs: string[] = [];
  const tlsPort = await freeTcpPort('127.0.0.1');
  // setsid: the service leads a process group of its own, as in a terminal.
  const child = Bun.spawn(['setsid', 'bun', CLI, 'serve'], {
    env: {
      ...process.env,
      HOST: '127.0.0.1',
      PORT: String(await freeTcpPort('127.0.0.1')),
      TLS_PORT: String(tlsPort),
      DATA_DIR: await seededDataDir(dirs, 'likeness-tls-serve-'),
      LOG_FORMAT: 'json',
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const out = collectOutput(child.stdout);
  const err = collectOutput(child.stderr);
  try {
    await eventually(() => out.text().includes('listening'), 60_000, 'the start line');
    const line = out
      .text()
      .split('\n')
      .find((l) => l.includes('listening'))!;
    expect(line).toContain(`open https://localhost:${tlsPort}/console`);
    expect(line).toContain('the browser warns once per device');
    // Its signal handlers are in place once the worker is.
    await eventually(() => out.text().includes('agent worker registered'), 60_000, 'the worker');
    process.kill(-child.pid, 'SIGTERM');
    expect(await child.exited).toBe(0);
    expect(out.text() + err.text()).not.toContain('exited unexpectedly');
  } finally {
    child.kill('SIGKILL');
    for (const d of dirs) await rm(d, { recursive: true, force: true });
  }
}, 90_000);
