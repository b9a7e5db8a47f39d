import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { EXTRA_INSTALL_TIMEOUT_MS, ensureExtra } from '../helpers/extras';
import { REPO_ROOT } from '../helpers/process';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';

/**
 * Builds the documentation site (VitePress, as `npm run docs:build` does, into a temp dir) and
 * checks every internal link of the built HTML: the page exists and so does the `#anchor`.
 * VitePress itself fails the build on a link to a missing page; it does not check anchors.
 * The site is not part of the default install: installed here on first use, as `npm run docs:build` does.
 */

let outDir: string;
let build: { code: number; output: string };

function run(command: string, args: string[]): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { cwd: REPO_ROOT, env: process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

beforeAll(async () => {
  ensureExtra('docs');
  outDir = makeTempDir('switchboard-docs-site-');
  build = await run('npm', ['run', '--silent', '--prefix', 'docs', 'build', '--', '--outDir', outDir]);
}, 240_000 + EXTRA_INSTALL_TIMEOUT_MS);

afterAll(removeTempDirs);

function htmlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? htmlFiles(full) : entry.name.endsWith('.html') ? [full] : [];
  });
}

/** The built file a site path points at (clean URLs: /guide/x → guide/x.html, /dir/ → dir/index.html). */
function targetFile(sitePath: string): string | null {
  const clean = decodeURIComponent(sitePath).replace(/^\//, '');
  for (const candidate of [clean, `${clean}.html`, path.join(clean, 'index.html')]) {
    const full = path.join(outDir, candidate);
    if (candidate !== '' && existsSync(full) && !full.endsWith('/')) {
      if (readdirSync(path.dirname(full)).includes(path.basename(full))) return full;
    }
  }
  return clean === '' ? path.join(outDir, 'index.html') : null;
}

const idCache = new Map<string, Set<string>>();
function idsOf(file: string): Set<string> {
  let ids = idCache.get(file);
  if (!ids) {
    ids = new Set([...readFileSync(file, 'utf8').matchAll(/\sid="([^"]+)"/g)].map((match) => match[1]!));
    idCache.set(file, ids);
  }
  return ids;
}

describe('the documentation site', () => {
  it('builds (no dead links to pages)', () => {
    expect({ code: build.code, output: build.code === 0 ? '' : build.output }).toEqual({ code: 0, output: '' });
  });

  it('has every page of the sidebar, the generated reference among them', () => {
    const config = readFileSync(path.join(REPO_ROOT, 'docs/.vitepress/config.mts'), 'utf8');
    const links = [...config.matchAll(/link: '([^']+)'/g)].map((match) => match[1]!);
    expect(links).toEqual(
      expect.arrayContaining([
        '/reference/rest',
        '/reference/websocket',
        '/reference/configuration',
        '/reference/errors',
        '/reference/cli',
        '/reference/benchmarks',
      ]),
    );
    expect(links.filter((link) => targetFile(link) === null)).toEqual([]);
  });

  it('has no broken internal link or anchor', () => {
    const broken: string[] = [];
    const files = htmlFiles(outDir);
    expect(files.length).toBeGreaterThan(20);
    for (const file of files) {
      const html = readFileSync(file, 'utf8');
      const page = '/' + path.relative(outDir, file);
      for (const match of html.matchAll(/\shref="([^"]+)"/g)) {
        const href = match[1]!.replace(/&amp;/g, '&');
        if (/^[a-z]+:/i.test(href) || href.startsWith('//')) continue; // external (and localhost) links
        const [rawPath, anchor] = href.split('#', 2) as [string, string | undefined];
        const target = rawPath === '' ? file : rawPath.startsWith('/') ? targetFile(rawPath) : targetFile(path.posix.join(path.posix.dirname(page), rawPath));
        if (!target) {
          broken.push(`${page}: ${href} (no such page)`);
          continue;
        }
        if (anchor && target.endsWith('.html') && !idsOf(target).has(decodeURIComponent(anchor))) broken.push(`${page}: ${href} (no such anchor)`);
      }
    }
    expect(broken).toEqual([]);
  });

  it('renders the Mermaid diagrams and the local search', () => {
    const channels = readFileSync(path.join(outDir, 'concepts/channels.html'), 'utf8');
    expect(channels).toMatch(/mermaid/i);
    expect(readdirSync(path.join(outDir, 'assets/chunks')).some((name) => name.includes('localSearchIndex'))).toBe(true);
  });
});
