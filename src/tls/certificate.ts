// The HTTPS listener's certificate: the operator's (TLS_CERT_FILE, TLS_KEY_FILE), or one made
// here and kept in DATA_DIR/tls, self-signed for this host's names and addresses. Browsers warn
// about a self-made certificate once per address (the visitor accepts it, then the page is a
// secure origin and may use the microphone); a certificate a browser trusts needs a name and a
// CA, which an operator brings (or a TLS proxy in front: README "Deploy").
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { hostname, networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import type { TlsSettings } from '../config.ts';

export interface Certificate {
  cert: string;
  key: string;
  /** Made here (a browser warns about it), not the operator's. */
  selfMade: boolean;
  /** The names and addresses it is valid for (a self-made one; the operator's are not read). */
  subjects: string[];
}

/** How long a self-made certificate lasts; it is made again a month before it ends. */
const VALID_DAYS = 397;
const RENEW_BEFORE_DAYS = 30;

/** This host's names and addresses: what a browser on the network may type to reach it. */
export function hostSubjects(extra: string[] = []): string[] {
  const addresses = Object.values(networkInterfaces())
    .flat()
    .filter((address) => address && !address.address.startsWith('fe80:'))
    .map((address) => address!.address);
  return [...new Set(['localhost', hostname(), '127.0.0.1', '::1', ...addresses, ...extra].filter(Boolean))].sort();
}

const isIp = (subject: string) => /^[\d.]+$/.test(subject) || subject.includes(':');

interface KeptCertificate {
  cert: string;
  key: string;
  subjects: string[];
  notAfter: string;
}

/** The certificate to serve: the operator's files, or a self-made one for `subjects`, kept in `dataDir`. */
export async function certificateFor(settings: TlsSettings, dataDir: string, subjects: string[]): Promise<Certificate> {
  if (settings.certFile && settings.keyFile) {
    const [cert, key] = await Promise.all([readFile(settings.certFile, 'utf8'), readFile(settings.keyFile, 'utf8')]);
    return { cert, key, selfMade: false, subjects: [] };
  }
  const dir = join(dataDir, 'tls');
  const file = join(dir, 'self-made.json');
  const kept = await readFile(file, 'utf8').then(
    (text) => JSON.parse(text) as KeptCertificate,
    () => undefined,
  );
  const renewBy = Date.now() + RENEW_BEFORE_DAYS * 86_400_000;
  // Kept while it covers every current name and address (a new network address: a new one).
  if (kept && subjects.every((s) => kept.subjects.includes(s)) && new Date(kept.notAfter).getTime() > renewBy) {
    return { cert: kept.cert, key: kept.key, selfMade: true, subjects: kept.subjects };
  }
  const notAfter = new Date(Date.now() + VALID_DAYS * 86_400_000);
  const made = await generate([{ name: 'commonName', value: `Likeness on ${hostname()}` }], {
    keySize: 2048,
    algorithm: 'sha256',
    notAfterDate: notAfter,
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: subjects.map((s) => (isIp(s) ? { type: 7, ip: s } : { type: 2, value: s })) },
    ],
  });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const record: KeptCertificate = { cert: made.cert, key: made.private, subjects, notAfter: notAfter.toISOString() };
  await writeFile(file, JSON.stringify(record), { mode: 0o600 });
  return { cert: made.cert, key: made.private, selfMade: true, subjects };
}
