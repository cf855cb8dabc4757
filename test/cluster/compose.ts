// deploy/compose.yaml as the suites read it: the cluster test starts its processes with the
// environment the file gives its Likeness services, each value that names a compose host or
// a secret replaced by the local one, so the file and the tested topology cannot drift.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const COMPOSE_FILE = join(import.meta.dir, '../../deploy/compose.yaml');

export interface ComposeService {
  name: string;
  image?: string;
  build?: string;
  command?: string[];
  environment: Record<string, string>;
}

export function compose(): { services: ComposeService[]; raw: Record<string, any> } {
  const raw = Bun.YAML.parse(readFileSync(COMPOSE_FILE, 'utf8')) as Record<string, any>;
  const services = Object.entries(raw.services as Record<string, any>).map(([name, service]) => ({
    name,
    image: service.image,
    build: service.build,
    command: service.command,
    environment: Object.fromEntries(
      Object.entries((service.environment ?? {}) as Record<string, unknown>).map(([key, value]) => [
        key,
        String(value),
      ]),
    ),
  }));
  return { services, raw };
}

/** The services that run Likeness itself (built from this repository). */
export function likenessServices(): ComposeService[] {
  return compose().services.filter((service) => service.build !== undefined);
}

export function composeService(name: string): ComposeService {
  const service = compose().services.find((s) => s.name === name);
  if (!service) throw new Error(`deploy/compose.yaml has no service ${name}`);
  return service;
}

/**
 * The environment compose gives `service`, for a process of this machine: every variable
 * whose value depends on the deployment (a compose host, a secret, a ${…} from .env) must be
 * in `local`; the rest (plain settings such as S3_REGION or AGENT_DRAIN_SECONDS) are used as
 * they are. A variable added to compose that the cluster test cannot place fails it.
 */
export function composeEnvironment(name: string, local: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  const unplaced: string[] = [];
  for (const [key, value] of Object.entries(composeService(name).environment)) {
    if (key in local) env[key] = local[key]!;
    else if (/\$\{|\b(postgres|redis|s3|livekit|caddy|api|agent):\d+/.test(value)) unplaced.push(`${key}=${value}`);
    else env[key] = value;
  }
  if (unplaced.length)
    throw new Error(
      `deploy/compose.yaml sets for ${name} what the cluster test does not place locally: ${unplaced.join(', ')}`,
    );
  return env;
}
