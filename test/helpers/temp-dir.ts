import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const created: string[] = [];

/** A fresh directory under the OS temp dir, removed by `removeTempDirs()` (call it in afterAll). */
export function makeTempDir(prefix = 'switchboard-test-'): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  created.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}
