import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root, found upwards from this file (it runs from docs/generate and from dist/docs/generate). */
export function repoRoot(): string {
  let dir = __dirname;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (
      existsSync(path.join(dir, 'package-lock.json')) &&
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'switchboard'
    )
      return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`docs generator: no switchboard package.json above ${__dirname}`);
    dir = parent;
  }
}
