import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './process';

/** A part of the project the default install leaves out (scripts/install-extra.js). */
export type Extra = 'docs' | 'webchat-widget';

/** How long a first install may take on a busy machine (npm ci of the part; later calls cost a file read). */
export const EXTRA_INSTALL_TIMEOUT_MS = 600_000;

/**
 * Installs a part on first use, as `npm run docs` does: the tests that build the docs site, render its
 * diagrams or open the webchat demo page call this in `beforeAll`. Concurrent callers wait for one install.
 */
export function ensureExtra(name: Extra): void {
  const result = spawnSync(process.execPath, [path.join(REPO_ROOT, 'scripts/install-extra.js'), name], { cwd: REPO_ROOT, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`installing ${name} failed:\n${result.stdout}${result.stderr}`);
}
