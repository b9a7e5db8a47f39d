import { existsSync, readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';

/**
 * What `npm install` costs a new user (issue 33: 1,779 packages, minutes): the default install carries
 * what `npm start` and `npm test` need; the documentation site (docs/) and the webchat demo page's
 * widget (extras/webchat-widget/) have lockfiles of their own and are installed on first use by
 * scripts/install-extra.js. This fails when one of them slips back into the root lockfile.
 */

interface Lockfile {
  packages: Record<string, { version?: string; optional?: boolean; os?: string[] }>;
}

const read = (file: string): any => JSON.parse(readFileSync(path.join(REPO_ROOT, file), 'utf8'));
const names = (lock: Lockfile) => Object.keys(lock.packages).filter((location) => location !== '');
const baseName = (location: string) => location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length);

/** The packages of the first-use parts that must never be in the default install. */
const LEFT_OUT = { docs: ['vitepress', 'mermaid', 'vitepress-plugin-mermaid'], 'extras/webchat-widget': ['rasa-webchat', 'webpack'] };

/** The root lockfile's size when the parts moved out (1,072 entries, 976 installed on Linux); room for growth, not for either part (~240 and ~590). */
const ROOT_PACKAGES_AT_MOST = 1_250;

describe('the default install', () => {
  const root = read('package.json');
  const lock = read('package-lock.json') as Lockfile;

  it('has no workspaces (a workspace is installed by the root npm ci)', () => {
    expect(root.workspaces).toBeUndefined();
    expect(Object.keys(lock.packages).filter((location) => !location.includes('node_modules/') && location !== '')).toEqual([]);
  });

  it('leaves out the docs site and the widget', () => {
    const everything = new Set(names(lock).map(baseName));
    expect(Object.values(LEFT_OUT).flatMap((list) => list.filter((name) => everything.has(name)))).toEqual([]);
    expect(Object.keys({ ...root.dependencies, ...root.devDependencies }).filter((name) => Object.values(LEFT_OUT).flat().includes(name))).toEqual([]);
  });

  it(`stays at most ${ROOT_PACKAGES_AT_MOST} packages`, () => {
    expect(names(lock).length).toBeLessThanOrEqual(ROOT_PACKAGES_AT_MOST);
  });

  it('installs each part on first use from the scripts that need it', () => {
    for (const script of ['docs', 'docs:build', 'docs:preview']) expect(root.scripts[script]).toMatch(/^node scripts\/install-extra\.js docs && /);
    expect(root.scripts['extras:install']).toBe('node scripts/install-extra.js docs webchat-widget');
    expect(root.scripts['lockfile:complete']).toContain('docs/package-lock.json extras/webchat-widget/package-lock.json');
  });
});

describe('docs/generate (compiled and run with the hub)', () => {
  it("resolves the root's packages, never the docs site's (docs/node_modules has its own commander)", () => {
    const from = (dir: string) => realpathSync(require.resolve('commander', { paths: [path.join(REPO_ROOT, dir)] }));
    expect(from('docs/generate')).toBe(from('.'));
  });
});

describe.each(Object.entries(LEFT_OUT))('the part %s', (dir, packages) => {
  it('has its own package.json and lockfile carrying its packages', () => {
    expect(existsSync(path.join(REPO_ROOT, dir, 'package-lock.json'))).toBe(true);
    const lock = read(path.join(dir, 'package-lock.json')) as Lockfile;
    expect(lock.packages['']).toMatchObject({ name: read(path.join(dir, 'package.json')).name });
    const inside = new Set(names(lock).map(baseName));
    expect(packages.filter((name) => !inside.has(name))).toEqual([]);
  });

  it('is known to scripts/install-extra.js', () => {
    expect(readFileSync(path.join(REPO_ROOT, 'scripts/install-extra.js'), 'utf8')).toContain(`dir: '${dir}'`);
  });
});
