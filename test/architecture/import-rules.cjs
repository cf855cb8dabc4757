// Import rules of the layout, checked by dependency-cruiser in `npm test`
// (test/architecture/import-rules.test.ts). Run by hand:
//   bun run check:imports
// The control plane (src/) and the agent (agent/) meet only in the contract (src/contract/)
// and the configuration (src/config.ts); README.md ("Layout") shows the picture.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'control-plane-never-imports-agent',
      comment:
        'src/ never imports agent/: what both processes need lives in src/contract/. Only the composition root that starts the worker (src/cli/) may.',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '^agent/' },
    },
    {
      name: 'agent-imports-only-contract-and-config',
      comment:
        'agent/ imports nothing of the control plane but the shared contract (src/contract/) and the configuration (src/config.ts).',
      severity: 'error',
      from: { path: '^agent/' },
      to: { path: '^src/', pathNot: ['^src/contract/', '^src/config\\.ts$'] },
    },
    {
      name: 'contract-is-neutral',
      comment:
        'src/contract/ is what both processes agree on: it imports no other file of src/ or agent/, only npm packages.',
      severity: 'error',
      from: { path: '^src/contract/' },
      to: { path: '^(src|agent)/', pathNot: '^src/contract/' },
    },
    {
      name: 'config-imports-only-contract',
      comment:
        'src/config.ts (and its parts in src/config/) is read by both processes: it may use the contract and its own parts, nothing else of ours.',
      severity: 'error',
      from: { path: '^src/config(\\.ts$|/)' },
      to: { path: '^(src|agent)/', pathNot: ['^src/contract/', '^src/config/'] },
    },
    {
      name: 'browser-code-bundles-no-server-code',
      comment:
        "Pages (src/console/web/, src/embed/web/, examples/web-client/) are bundled for browsers: of ours they take types only, the console's own browser code, and the constants of src/contract/wire-names.ts, languages.ts and webhook-events.ts.",
      severity: 'error',
      from: {
        path: '^(src/console/web|src/embed/web|examples/web-client)/',
        pathNot: '^src/(console|embed)/web/build\\.ts$',
      },
      to: {
        path: '^(src|agent)/',
        pathNot: ['^src/(console|embed)/web/', '^src/contract/(wire-names|languages|webhook-events)\\.ts$'],
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'code-never-imports-tests',
      comment: 'Tests and benches import the code, never the other way round.',
      severity: 'error',
      from: { path: '^(src|agent|examples)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'features-enter-by-their-front-door',
      comment:
        "A feature of src/ uses another through that feature's index.ts, which says what it offers. Named exceptions: schema.ts (the tables, gathered for drizzle by src/db/schema.ts), contract.ts (the feature's wire schemas, which other features' schemas and the console's pages are built from; like schema.ts, it loads nothing of the feature) and the shared layers, libraries rather than features, whose modules are imported by name: src/http/, src/db/, src/contract/, src/config/, src/logging/. The composition root (src/*.ts) wires features from their inside; pages (src/*/web/) are bundled for browsers and follow browser-code-bundles-no-server-code instead; a schema.ts takes its columns' types from the files that define them, so the tables load nothing else.",
      severity: 'error',
      from: {
        path: '^src/([^/]+)/',
        pathNot: ['^src/(http|db|contract|config|logging)/', '^src/[^/]+/web/', '^src/[^/]+/[^/]*schema\\.ts$'],
      },
      to: {
        path: '^src/[^/]+/',
        pathNot: ['^src/$1/', '^src/[^/]+/(index|schema|contract)\\.ts$', '^src/(http|db|contract|config|logging)/'],
      },
    },
    {
      name: 'no-circular',
      comment: 'Modules of src/ and agent/ import each other in one direction only.',
      severity: 'error',
      from: { path: '^(src|agent)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|^src/bootstrap/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.mjs', '.js', '.json'] },
  },
};
