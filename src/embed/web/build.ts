// Bundles the embed in memory (once per process): /embed.js, the small classic script that
// defines <likeness-avatar>, and /embed/livekit.js, the module it imports on the first call
// (livekit-client is most of the weight, and a page that only shows the button never needs it).
import { join } from 'node:path';

export interface EmbedBundle {
  /** /embed.js: an IIFE, so it runs from a plain `<script src>` and can find its own URL. */
  script: string;
  /** /embed/livekit.js: an ES module. */
  chunk: string;
  /** The chunk's content hash: embed.js asks for `embed/livekit.js?v=<it>`, so the two never mix across builds. */
  chunkVersion: string;
}

const WEB_DIR = import.meta.dir;

export async function buildEmbed(): Promise<EmbedBundle> {
  const chunk = await bundle(join(WEB_DIR, 'call.ts'), 'esm', {});
  const chunkVersion = Bun.hash(chunk).toString(36);
  const script = await bundle(join(WEB_DIR, 'element.ts'), 'iife', {
    LIKENESS_CHUNK: JSON.stringify(`embed/livekit.js?v=${chunkVersion}`),
  });
  return { script, chunk, chunkVersion };
}

async function bundle(entry: string, format: 'esm' | 'iife', define: Record<string, string>): Promise<string> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    format,
    minify: true,
    splitting: false,
    sourcemap: 'none',
    // Browsers have no process.env; libraries branch on it for their development builds.
    define: { 'process.env.NODE_ENV': '"production"', ...define },
    throw: false,
  });
  if (!result.success) {
    const messages = result.logs.map((log) => String(log)).join('\n');
    throw new Error(`bundling ${entry} failed:\n${messages}`);
  }
  const scripts = result.outputs.filter((output) => output.kind === 'entry-point');
  if (scripts.length !== 1) throw new Error(`bundling ${entry} gave ${scripts.length} entry points; expected one`);
  return scripts[0]!.text();
}
