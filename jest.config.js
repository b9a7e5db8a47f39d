// Tests run TypeScript through SWC (fast, no type-checking); `npm run typecheck` checks types.
// globalSetup builds dist/ once, because some tests start real server and worker processes.
const ESM_ONLY_PACKAGES = ['@seriousme/openapi-schema-validator', '@octokit/webhooks-methods'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/'],
  transform: {
    '^.+\\.(t|j)sx?$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs' } }],
  },
  // ESM-only packages must be compiled to CommonJS for jest (Node 20 cannot require ESM inside jest).
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  // @octokit/webhooks-methods exports only an `import` condition: jest resolves its file here, and compiles it above.
  moduleNameMapper: { '^@octokit/webhooks-methods$': '<rootDir>/node_modules/@octokit/webhooks-methods/dist-node/index.js' },
  globalSetup: '<rootDir>/test/global-setup.ts',
  testTimeout: 30_000,
  maxWorkers: 2,
};
