// Bundles the console and the example web client in memory (once per process), so the service
// serves them without a build step or anything fetched from elsewhere at run time.
import { join } from 'node:path';

export interface FrontEndAsset {
  body: string;
  type: string;
}

const CONSOLE_DIR = import.meta.dir;
const EXAMPLE_DIR = join(import.meta.dir, '../../../examples/web-client');

const JS = 'text/javascript; charset=utf-8';
const CSS = 'text/css; charset=utf-8';
const HTML = 'text/html; charset=utf-8';

/** URL path → asset: the console shell and bundle, and the example client and its bundle. */
export async function buildFrontEnd(): Promise<Map<string, FrontEndAsset>> {
  const [consoleOutputs, exampleOutputs, consoleHtml, exampleHtml] = await Promise.all([
    bundle(join(CONSOLE_DIR, 'app.ts')),
    bundle(join(EXAMPLE_DIR, 'main.ts')),
    Bun.file(join(CONSOLE_DIR, 'index.html')).text(),
    Bun.file(join(EXAMPLE_DIR, 'index.html')).text(),
  ]);

  const assets = new Map<string, FrontEndAsset>();
  assets.set('/console', { body: consoleHtml, type: HTML });
  assets.set('/console/assets/app.js', { body: await only(consoleOutputs, '.js', 'console'), type: JS });
  // app.ts imports app.css, which Bun emits as a separate artifact.
  assets.set('/console/assets/app.css', { body: await only(consoleOutputs, '.css', 'console'), type: CSS });
  assets.set('/examples/web-client/', { body: exampleHtml, type: HTML });
  assets.set('/examples/web-client/main.js', { body: await only(exampleOutputs, '.js', 'example client'), type: JS });
  // The pages' CSP allows only same-origin styles, so the example's CSS is a file too.
  assets.set('/examples/web-client/main.css', {
    body: await only(exampleOutputs, '.css', 'example client'),
    type: CSS,
  });
  return assets;
}

async function bundle(entry: string): Promise<Bun.BuildArtifact[]> {
  const result = await Bun.build({
    entrypoints: [entry],
    target: 'browser',
    format: 'esm',
    minify: true,
    splitting: false,
    sourcemap: 'none',
    // Browsers have no process.env; libraries branch on it for their development builds.
    define: { 'process.env.NODE_ENV': '"production"' },
    throw: false,
  });
  if (!result.success) {
    const messages = result.logs.map((log) => String(log)).join('\n');
    throw new Error(`bundling ${entry} failed:\n${messages}`);
  }
  return result.outputs;
}

/** The one artifact with that extension (the entry's JS, or the CSS it imported). */
async function only(outputs: Bun.BuildArtifact[], extension: string, what: string): Promise<string> {
  const matches = outputs.filter((output) => output.path.endsWith(extension) && output.kind !== 'sourcemap');
  if (matches.length !== 1) {
    throw new Error(
      `the ${what} bundle has ${matches.length} ${extension} outputs (${outputs.map((output) => output.path).join(', ')}); expected one`,
    );
  }
  return matches[0]!.text();
}
