import pc from 'picocolors';

export interface BannerFacts {
  version: string;
  url: string;
  docsUrl: string;
  listening: string;
  storage: string;
  queue: string;
  worker: string;
  configFile: string | null;
}

/** The human-readable startup banner (terminals only; JSON logs carry the same facts in one line). */
export function renderBanner(facts: BannerFacts): string {
  const rows: [string, string][] = [
    ['API', facts.url],
    ['Docs', facts.docsUrl],
    ['Listening', facts.listening],
    ['Storage', facts.storage],
    ['Queue', facts.queue],
    ['Worker', facts.worker],
    ['Config', facts.configFile ?? 'built-in defaults (no config.yaml)'],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    '',
    `  ${pc.bold('Switchboard')} ${pc.dim(`v${facts.version}`)}`,
    '',
    ...rows.map(([name, value]) => `  ${pc.dim(name.padEnd(width))}  ${value}`),
    '',
  ].join('\n');
}
