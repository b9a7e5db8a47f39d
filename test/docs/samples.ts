import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from '../helpers/process';

/**
 * The code samples of the documentation site's hand-written pages. Every fenced block carries a
 * marker on the line(s) above it, `<!-- sample: <kind> [detail] -->`, saying how the test treats it:
 */
export const SAMPLE_KINDS = {
  /** Shell, run in order with the page's other `run` samples against a hub the test starts. */
  run: 'executed',
  /** A GitHub Actions job whose `run:` steps are executed against the test's hub. */
  'ci-job': 'executed',
  /** A config.yaml fragment: the hub's configuration loader must accept it. */
  config: 'validated',
  /** A workflow file: the hub must accept it (dry-run sync). */
  workflow: 'validated',
  /** A workflow test file (`workflows/tests/*.yaml`): every case must be valid. */
  'workflow-test': 'validated',
  /** `npm start` and the like: the test starts the hub itself, the same program. */
  'started-by-test': 'not run',
  /** Servers that run until stopped; the detail names the test that covers the arrangement. */
  'long-running': 'not run',
  /** Needs an account on a platform (Slack, Telegram, an identity provider). */
  platform: 'not run',
  /** Needs software the test machine does not have (nginx, a PostgreSQL with your data). */
  external: 'not run',
  /** A feature being built in another issue; the merge wires it into this test. */
  pending: 'not run',
  /** Output printed by the sample above it. */
  output: 'not run',
} as const;

export type SampleKind = keyof typeof SAMPLE_KINDS;

export interface Sample {
  file: string;
  line: number;
  lang: string;
  code: string;
  kind: SampleKind | null;
  /** What follows the kind in the marker (`covered-by=…`, a platform name, an issue). */
  detail: string;
}

export interface SamplePage {
  file: string;
  samples: Sample[];
  /** `<!-- sample-hub: … -->` lines: how the page's hub is started (env `KEY=VALUE`, `saml`, `data-dir=…`, `config-sample`: the page's first config sample as the hub's config.yaml). */
  hub: string[];
}

const DOCS = path.join(REPO_ROOT, 'docs');
/** Generated pages and the project's own notes are not guides; everything else is. */
const NOT_GUIDES = [/^reference\//, /^decisions\.md$/, /^development\.md$/, /^errors\.md$/, /^node_modules\//, /^generate\//, /^\.vitepress\//];

export function samplePageFiles(): string[] {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      const relative = path.relative(DOCS, full);
      if (NOT_GUIDES.some((pattern) => pattern.test(relative + (entry.isDirectory() ? '/' : '')))) continue;
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(relative);
    }
  };
  walk(DOCS);
  return files.sort();
}

export function parseSamplePage(file: string): SamplePage {
  const lines = readFileSync(path.join(DOCS, file), 'utf8').split('\n');
  const samples: Sample[] = [];
  const hub: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const hubMarker = /^<!-- sample-hub: (.+?) -->$/.exec(lines[index]!.trim());
    if (hubMarker) hub.push(hubMarker[1]!);
    const fence = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/.exec(lines[index]!);
    if (!fence) continue;
    const [, indent, marks, lang] = fence;
    const start = index;
    const body: string[] = [];
    for (index++; index < lines.length && !lines[index]!.trim().startsWith(marks!); index++) body.push(lines[index]!.slice(indent!.length));
    // The nearest comment above the fence (blank lines and sample-hub lines may sit between).
    let kind: SampleKind | null = null;
    let detail = '';
    for (let above = start - 1; above >= 0; above--) {
      const text = lines[above]!.trim();
      if (text === '' || text.startsWith('<!-- sample-hub:')) continue;
      const marker = /^<!-- sample: ([\w-]+)\s*(.*?)\s*-->$/.exec(text);
      if (marker && marker[1]! in SAMPLE_KINDS) {
        kind = marker[1] as SampleKind;
        detail = marker[2]!;
      }
      break;
    }
    if (lang === 'mermaid') continue; // a diagram, not a sample
    samples.push({ file, line: start + 1, lang: lang ?? '', code: body.join('\n'), kind, detail });
  }
  return { file, samples, hub };
}
