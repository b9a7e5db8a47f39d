import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Builds dist/ once before the suite: process-level tests start the real `node dist/src/main.js`.
 * Incremental, so it costs about a second when nothing changed. The Web UI bundle too (skipped when
 * web/ did not change): without it the hub answers its pages 503, which the UI tests and the
 * bad-input runs (they fetch `/` and the asset paths) would see as failures.
 */
export default function globalSetup(): void {
  const root = path.resolve(__dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
  execFileSync(process.execPath, [path.join(root, 'scripts/build-web.js')], { cwd: root, stdio: 'inherit' });
}
