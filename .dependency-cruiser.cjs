/**
 * Import directions of ARCHITECTURE.md, checked by dependency-cruiser (`npm run lint:layers`, and in
 * `npm test` through test/architecture/layers.test.ts). docs/development.md, "Layering", explains
 * each rule and what to do when one fails: move the type or constant to the folder it belongs to;
 * never add an exception here for a new import.
 */

/** Every folder of this repository whose files an import could reach. */
const REPO = '^(src|adapters|test|bench|docs|scripts|web)/';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'protocol-imports-nothing',
      comment:
        'src/protocol is the wire protocol the server, the CLI and the Web UI share: the bottom layer. It imports nothing else in the repo (npm packages such as zod are fine).',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { path: REPO, pathNot: '^src/protocol/' },
    },
    {
      name: 'protocol-runs-in-browsers',
      comment: 'The Web UI bundles src/protocol: it imports no Node built-in module (node:fs, node:http, …).',
      severity: 'error',
      from: { path: '^src/protocol/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'core-imports-only-protocol',
      comment: 'src/core holds the contracts every other folder builds on: it imports nothing else in the repo but src/protocol (npm packages are fine).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: REPO, pathNot: ['^src/core/', '^src/protocol/'] },
    },
    {
      name: 'adapters-import-only-core',
      comment:
        'A channel adapter translates between its platform and src/core contracts: it imports src/core, src/protocol, adapters/shared and its own folder (plus its SDK), never the rest of src/ or another channel.',
      severity: 'error',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: REPO, pathNot: ['^src/core/', '^src/protocol/', '^adapters/shared/', '^adapters/$1/'] },
    },
    {
      name: 'registry-imports-only-adapters-and-core',
      comment: 'adapters/index.ts (the channel registry) lists the adapter folders; like them it reaches src/ only through src/core (and src/protocol).',
      severity: 'error',
      from: { path: '^adapters/[^/]+$' },
      to: { path: REPO, pathNot: ['^src/core/', '^src/protocol/', '^adapters/'] },
    },
    {
      name: 'config-is-a-leaf',
      comment: 'src/config loads and validates configuration; everything may read it, so it imports nothing but src/core and src/protocol (a cycle through config ties every folder together).',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: REPO, pathNot: ['^src/config/', '^src/core/', '^src/protocol/'] },
    },
    {
      name: 'turns-below-their-callers',
      comment:
        "src/turns owns a turn's life (accept, take, end, release, start the next) and writes the frames that end it; the worker, the sessions' hub, the API, the server and the composition root ask it. It never imports them: a turn's transitions do not depend on who runs or shows the turn.",
      severity: 'error',
      from: { path: '^src/turns/' },
      to: { path: '^src/(worker|sessions|api|server|auth|compose)/|^src/(main|worker-main)\\.ts$' },
    },
    {
      name: 'only-composition-knows-adapters',
      comment:
        'The composition root (src/compose/ and the entries src/main.ts, src/worker-main.ts) is the only part of src/ that knows the channel registry and the concrete adapters. Others take channel descriptors as data (src/core/channel.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/compose/', '^src/main\\.ts$', '^src/worker-main\\.ts$'] },
      to: { path: '^adapters/' },
    },
    {
      name: 'nothing-imports-the-composition-root',
      comment: 'Nothing depends on the composition root: it imports everything, and only the entries (src/main.ts, src/worker-main.ts) start it.',
      severity: 'error',
      from: { path: '^(src|adapters|web)/', pathNot: ['^src/compose/', '^src/main\\.ts$', '^src/worker-main\\.ts$'] },
      to: { path: ['^src/compose/', '^src/main\\.ts$'] },
    },
    {
      name: 'web-imports-only-protocol',
      comment: 'The Web UI talks to the hub only through its public API: of src/ it imports the wire protocol (src/protocol) alone, and nothing of adapters/.',
      severity: 'error',
      from: { path: '^web/' },
      to: { path: '^(src|adapters)/', pathNot: '^src/protocol/' },
    },
    {
      name: 'no-tests-in-product',
      comment: 'Shipped code never imports tests, fakes or benchmarks.',
      severity: 'error',
      from: { path: '^(src|adapters|web)/' },
      to: { path: '^(test|bench)/' },
    },
    {
      name: 'no-folder-cycles',
      comment:
        'Imports between folders flow one way: a cycle between folders (a folder counts its subfolders) means a type or constant lives in the wrong folder. Move it to the lower one.',
      severity: 'error',
      scope: 'folder',
      from: { path: '^(src|adapters)/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['node_modules', '^dist/'] },
    // Type-only imports are dependencies too: a cycle through types is still a cycle in the design.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
  },
};
