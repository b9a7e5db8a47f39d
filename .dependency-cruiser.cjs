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
      name: 'core-imports-nothing',
      comment: 'src/core holds the contracts every other folder builds on: it imports nothing else in the repo (npm packages are fine).',
      severity: 'error',
      from: { path: '^src/core/' },
      to: { path: REPO, pathNot: '^src/core/' },
    },
    {
      name: 'adapters-import-only-core',
      comment:
        'A channel adapter translates between its platform and src/core contracts: it imports src/core, adapters/shared and its own folder (plus its SDK), never the rest of src/ or another channel.',
      severity: 'error',
      from: { path: '^adapters/([^/]+)/' },
      to: { path: REPO, pathNot: ['^src/core/', '^adapters/shared/', '^adapters/$1/'] },
    },
    {
      name: 'registry-imports-only-adapters-and-core',
      comment: 'adapters/index.ts (the channel registry) lists the adapter folders; like them it reaches src/ only through src/core.',
      severity: 'error',
      from: { path: '^adapters/[^/]+$' },
      to: { path: REPO, pathNot: ['^src/core/', '^adapters/'] },
    },
    {
      name: 'config-is-a-leaf',
      comment: 'src/config loads and validates configuration; everything may read it, so it imports nothing but src/core (a cycle through config ties every folder together).',
      severity: 'error',
      from: { path: '^src/config/' },
      to: { path: REPO, pathNot: ['^src/config/', '^src/core/'] },
    },
    {
      name: 'turns-below-their-callers',
      comment:
        "src/turns owns a turn's life (accept, take, end, release, start the next) and writes the frames that end it; the worker, the sessions' hub, the API and the server ask it. It never imports them: a turn's transitions do not depend on who runs or shows the turn.",
      severity: 'error',
      from: { path: '^src/turns/' },
      to: { path: '^src/(worker|sessions|api|server|auth)/|^src/(main|worker-main)\\.ts$' },
    },
    {
      name: 'only-main-knows-adapters',
      comment: 'src/main.ts is the composition root: the only file of src/ that knows the channel registry and the concrete adapters. Others take channel descriptors as data (src/core/channel.ts).',
      severity: 'error',
      from: { path: '^src/', pathNot: '^src/main\\.ts$' },
      to: { path: '^adapters/' },
    },
    {
      name: 'nothing-imports-main',
      comment: 'Nothing depends on the composition root (worker-main.ts only starts it).',
      severity: 'error',
      from: { path: '^(src|adapters)/', pathNot: '^src/worker-main\\.ts$' },
      to: { path: '^src/main\\.ts$' },
    },
    {
      name: 'no-tests-in-product',
      comment: 'Shipped code never imports tests, fakes or benchmarks.',
      severity: 'error',
      from: { path: '^(src|adapters)/' },
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
