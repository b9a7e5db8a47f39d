import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * Builds dist/ once before the suite: process-level tests start the real `node dist/src/main.js`.
 * Incremental, so it costs about a second when nothing changed.
 */
export default function globalSetup(): void {
  const root = path.resolve(__dirname, '..');
  execFileSync(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], {
    cwd: root,
    stdio: 'inherit',
  });
}
