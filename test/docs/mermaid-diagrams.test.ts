import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { EXTRA_INSTALL_TIMEOUT_MS, ensureExtra } from '../helpers/extras';
import { REPO_ROOT } from '../helpers/process';
import { launchBrowser } from '../web/browser';

/**
 * Every Mermaid diagram of the docs, rendered by the site's own renderer (the `mermaid` package
 * vitepress-plugin-mermaid loads in the browser) in Debian's chromium: a diagram the site would
 * show as "Syntax error" fails here, naming its page and line (issue 33: a `;` in docs/slack.md did).
 * The site's packages are not part of the default install: installed here on first use (docs/).
 */
jest.setTimeout(60_000);

const DOCS = path.join(REPO_ROOT, 'docs');

interface Diagram {
  file: string;
  line: number;
  source: string;
}

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) return [];
    const full = path.join(dir, entry.name);
    return entry.isDirectory() ? markdownFiles(full) : entry.name.endsWith('.md') ? [full] : [];
  });
}

/** The ```mermaid fences of a page, with the line each starts on. */
function mermaidBlocks(file: string, text: string): Diagram[] {
  const found: Diagram[] = [];
  const lines = text.split('\n');
  for (let index = 0; index < lines.length; index += 1) {
    if (lines[index]!.trim() !== '```mermaid') continue;
    const end = lines.findIndex((line, at) => at > index && line.trim() === '```');
    found.push({ file: path.relative(REPO_ROOT, file), line: index + 1, source: lines.slice(index + 1, end).join('\n') });
    index = end;
  }
  return found;
}

const diagrams = markdownFiles(DOCS).flatMap((file) => mermaidBlocks(file, readFileSync(file, 'utf8')));

let browser: Browser;
let page: Page;

beforeAll(async () => {
  ensureExtra('docs');
  const mermaid = require.resolve('mermaid/dist/mermaid.min.js', { paths: [DOCS] });
  browser = await launchBrowser();
  page = await browser.newPage();
  await page.setContent('<!doctype html><html><body><div id="out"></div></body></html>');
  await page.addScriptTag({ path: mermaid });
  await page.evaluate(() => (globalThis as any).mermaid.initialize({ startOnLoad: false }));
}, 60_000 + EXTRA_INSTALL_TIMEOUT_MS);

afterAll(async () => {
  await browser?.close();
});

/** Renders one diagram to SVG as the site does; the renderer's complaint, or null. */
function render(source: string, id: string): Promise<string | null> {
  return page.evaluate(
    async ({ source, id }) => {
      try {
        const { svg } = await (globalThis as any).mermaid.render(id, source);
        return svg.includes('Syntax error') ? 'rendered the syntax-error picture' : null;
      } catch (error) {
        return String((error as Error)?.message ?? error)
          .split('\n')
          .slice(0, 4)
          .join(' ');
      }
    },
    { source, id },
  );
}

describe('the Mermaid diagrams of the docs', () => {
  it('are found (the docs have several)', () => {
    expect(diagrams.length).toBeGreaterThanOrEqual(8);
  });

  it.each(diagrams.map((diagram): [string, Diagram] => [`${diagram.file}:${diagram.line}`, diagram]))('%s renders', async (_where, diagram) => {
    expect(await render(diagram.source, `d${diagram.line}`)).toBeNull();
  });

  it('fails on a broken diagram (the check can fail): the `;` docs/slack.md had', async () => {
    const broken = 'sequenceDiagram\n  participant H as Hub\n  participant S as Slack\n  H->>S: chat.stopStream with the rest; setStatus "" (cleared)';
    expect(await render(broken, 'broken')).not.toBeNull();
  });
});
