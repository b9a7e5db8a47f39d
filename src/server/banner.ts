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

/** The address the hub is reached at: `server.public_url`, else the host it listens on and its port. */
export function serviceUrl(server: { public_url?: string | null; host: string }, port: number): string {
  return server.public_url ?? `http://${displayHost(server.host)}:${port}`;
}

/** A wildcard address means this machine; an IPv6 address goes in brackets. */
function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}
