// @ts-check
/**
 * The linter (typescript-eslint, type-aware): rules that catch what review keeps catching here, not
 * a style guide — Prettier formats (`.prettierrc.json`). `npm run lint`; `npm test` runs it.
 */
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['dist/**', 'node_modules/**', 'docs/node_modules/**', 'docs/.vitepress/**', 'coverage/**', 'bench/results/**', 'web-screenshots/**', 'data/**'],
  },
  {
    files: ['src/**/*.ts', 'adapters/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'docs/generate/**/*.ts', 'web/src/**/*.{ts,tsx}'],
    languageOptions: {
      parser: tseslint.parser,
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    plugins: { '@typescript-eslint': tseslint.plugin },
    linterOptions: { reportUnusedDisableDirectives: 'error' },
    rules: {
      // A promise nobody awaits or catches loses its failure (and its order): await it, or `void` it on purpose.
      '@typescript-eslint/no-floating-promises': 'error',
      // A promise where a plain value is expected (an `if`, a spread, a listener that ignores it).
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      // A switch over a union names every member; a new event type is then a compile-time finding in every renderer.
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: false, requireDefaultForNonUnion: false }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/only-throw-error': 'error',
      '@typescript-eslint/prefer-promise-reject-errors': 'error',
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // Tests read frames and bodies they do not type (a JSON answer is `any` by nature there).
    files: ['test/**/*.ts', 'web/src/**/*.test.{ts,tsx}'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
