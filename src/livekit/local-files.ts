// The local LiveKit server's files in its data folder: persisted credentials (so restarts keep
// tokens and webhook signatures valid) and the YAML config written at every start. Both are
// readable by their owner only.
import { randomBytes } from 'node:crypto';
import { chmod, link, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface Credentials {
  apiKey: string;
  apiSecret: string;
}

const CREDENTIALS_FILE = 'credentials.json';
export const CONFIG_FILE = 'livekit.yaml';
const MIN_SECRET_LENGTH = 32; // livekit-server complains below this

async function readCredentials(path: string): Promise<Credentials | null> {
  let saved: unknown;
  try {
    saved = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT' || error instanceof SyntaxError) return null;
    throw error;
  }
  const { api_key: apiKey, api_secret: apiSecret } = (saved ?? {}) as { api_key?: unknown; api_secret?: unknown };
  if (typeof apiKey !== 'string' || !/^[A-Za-z0-9_-]+$/.test(apiKey)) return null;
  if (typeof apiSecret !== 'string' || apiSecret.length < MIN_SECRET_LENGTH) return null;
  return { apiKey, apiSecret };
}

/**
 * Reuses dataDir's credentials, or makes and saves new ones (replacing an unusable file).
 * Of two processes starting on a fresh folder at once, one saves its pair and both use it.
 */
export async function loadCredentials(dataDir: string): Promise<Credentials> {
  const path = join(dataDir, CREDENTIALS_FILE);
  const saved = await readCredentials(path);
  if (saved) return saved;
  const fresh = {
    apiKey: `API${randomBytes(6).toString('hex')}`,
    apiSecret: randomBytes(32).toString('base64url'), // 43 characters
  };
  const text = `${JSON.stringify({ api_key: fresh.apiKey, api_secret: fresh.apiSecret }, null, 2)}\n`;
  const temporary = await writeTemporary(path, text);
  try {
    await link(temporary, path); // fails if a file is there
    return fresh;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    const theirs = await readCredentials(path);
    if (theirs) return theirs;
    await rename(temporary, path); // the file there is unusable: replace it
    return fresh;
  } finally {
    await unlink(temporary).catch(() => {});
  }
}

/** A file beside `path`, readable by its owner only. */
async function writeTemporary(path: string, text: string): Promise<string> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, text, { mode: 0o600 });
  await chmod(temporary, 0o600);
  return temporary;
}

/** Writes a file readable by its owner only, replacing any older one whole. */
export async function writePrivate(path: string, text: string) {
  await rename(await writeTemporary(path, text), path);
}

const yamlString = (value: string) => JSON.stringify(value); // a JSON string is a YAML double-quoted scalar

export interface ServerConfig extends Credentials {
  /** Signalling and the API: always loopback (clients come through the service's /rtc). */
  host: string;
  port: number;
  /** Media: the address in the ICE candidates (127.0.0.1: loopback only), UDP ports, ICE/TCP port (0: none). */
  rtc: { nodeIp: string; start: number; end: number; tcpPort: number };
  webhookUrl?: string;
  /** host:port of the Redis that makes this server one node of a cluster (tests, deploy/livekit.yaml). */
  redis?: string;
  /** Where it serves Prometheus metrics (rooms per node, …); unset: nowhere. */
  prometheusPort?: number;
  /** How a cluster picks the node of a new room (LiveKit's node_selector.sort_by); unset: LiveKit's default. */
  nodeSelector?: 'random' | 'rooms' | 'sysload';
}

/** The least time between two keyframe requests the SFU sends to a publisher. */
export const PLI_THROTTLE_MS = 100;

export function configYaml(c: ServerConfig): string {
  const loopback = c.rtc.nodeIp === '127.0.0.1';
  const lines = [
    '# Written by Likeness (src/livekit/local-files.ts) at every start; edits are overwritten.',
    `port: ${c.port}`,
    `bind_addresses: [${yamlString(c.host)}]`,
    'rtc:',
    // Media: one UDP port per peer connection, from this range, gathered on the node's address
    // only (pion would otherwise offer every interface, container bridges included).
    `  port_range_start: ${c.rtc.start}`,
    `  port_range_end: ${c.rtc.end}`,
    `  tcp_port: ${c.rtc.tcpPort}`, // 0: no ICE/TCP (its listener ignores bind_addresses)
    '  use_external_ip: false', // no STUN lookup of a public address
    `  node_ip: ${yamlString(c.rtc.nodeIp)}`,
    ...(loopback ? ['  enable_loopback_candidate: true', '  interfaces:', '    includes: ["lo"]'] : []),
    '  ips:',
    `    includes: [${yamlString(`${c.rtc.nodeIp}/32`)}]`,
    // A visitor who subscribes to the avatar sees nothing until its next keyframe, which the
    // SFU asks for at most every 500 ms by default (our single layer is LiveKit's "low"):
    // a session has one viewer, so a short throttle costs little and saves up to half a second.
    '  pli_throttle:',
    `    low_quality: ${PLI_THROTTLE_MS}ms`,
    `    mid_quality: ${PLI_THROTTLE_MS}ms`,
    `    high_quality: ${PLI_THROTTLE_MS}ms`,
    'keys:',
    `  ${yamlString(c.apiKey)}: ${yamlString(c.apiSecret)}`,
    'logging:',
    '  level: warn',
    // Rooms exist only when a session creates them: a late agent job must not conjure an
    // empty room back by joining after the session ended.
    'room:',
    '  auto_create: false',
  ];
  if (c.redis) lines.push('redis:', `  address: ${yamlString(c.redis)}`);
  if (c.prometheusPort) lines.push('prometheus:', `  port: ${c.prometheusPort}`);
  if (c.nodeSelector) lines.push('node_selector:', '  kind: any', `  sort_by: ${c.nodeSelector}`);
  if (c.webhookUrl) {
    lines.push('webhook:', `  api_key: ${yamlString(c.apiKey)}`, '  urls:', `    - ${yamlString(c.webhookUrl)}`);
  }
  return `${lines.join('\n')}\n`;
}
