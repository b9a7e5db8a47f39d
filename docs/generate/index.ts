/**
 * Generates the site's reference pages from the code (docs/reference/*.md), so they cannot drift:
 *
 *   node dist/docs/generate/index.js           write the pages            (npm run docs:generate)
 *   node dist/docs/generate/index.js --check   exit 1 if a page differs   (test/docs/reference.test.ts does the same)
 *   node dist/docs/generate/index.js --bench   copy the newest bench/results/*.json into bench-latest.json first (npm run docs:bench)
 *
 * `npm run docs` and `npm run docs:build` regenerate before serving or building.
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { benchReferencePage, collectBenchResults } from './bench-reference';
import { cliReferencePage } from './cli-reference';
import { configReferencePage } from './config-reference';
import { errorsReferencePage } from './errors-reference';
import { fetchOpenApiDocument } from './openapi-document';
import { repoRoot } from './repo';
import { restReferencePage } from './rest-reference';
import { websocketReferencePage } from './websocket-reference';

/** Every generated page, by path relative to the repository root. */
export async function generateReferencePages(root = repoRoot()): Promise<Map<string, string>> {
  const openapi = await fetchOpenApiDocument();
  const pages: [string, string][] = [
    ['docs/reference/rest.md', restReferencePage(openapi)],
    ['docs/reference/websocket.md', websocketReferencePage(root)],
    ['docs/reference/configuration.md', configReferencePage(root)],
    ['docs/reference/errors.md', errorsReferencePage(root)],
    ['docs/reference/cli.md', await cliReferencePage(root)],
    ['docs/reference/benchmarks.md', benchReferencePage(root)],
  ];
  return new Map(pages.map(([file, text]) => [file, `${text.trimEnd()}\n`]));
}

/** The generated pages whose file on disk differs from what the generator produces now. */
export async function staleReferencePages(root = repoRoot()): Promise<string[]> {
  const pages = await generateReferencePages(root);
  return [...pages].filter(([file, text]) => !existsSync(path.join(root, file)) || readFileSync(path.join(root, file), 'utf8') !== text).map(([file]) => file);
}

async function main(argv: string[]): Promise<number> {
  const root = repoRoot();
  if (argv.includes('--bench')) {
    const updated = collectBenchResults(root);
    process.stdout.write(`bench-latest.json: ${updated.length > 0 ? `updated ${updated.join(', ')}` : 'no newer results in bench/results/'}\n`);
  }
  if (argv.includes('--check')) {
    const stale = await staleReferencePages(root);
    if (stale.length === 0) return 0;
    process.stderr.write(`reference pages out of date (run npm run docs:generate): ${stale.join(', ')}\n`);
    return 1;
  }
  const pages = await generateReferencePages(root);
  for (const [file, text] of pages) writeFileSync(path.join(root, file), text);
  process.stdout.write(`generated ${[...pages.keys()].join(', ')}\n`);
  return 0;
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`docs generator: ${error instanceof Error ? error.message : String(error)}\n`);
      process.exit(1);
    },
  );
}
