import pc from 'picocolors';

export interface BannerFacts {
  version: string;
  /** The browser UI's address (`/`), with a note when it is not built. */
  web_ui: string;
  url: string;
  docsUrl: string;
  listening: string;
  storage: string;
  queue: string;
  worker: string;
  configFile: string | null;
  /** `builtin (offline, no key needed)`, `openai gpt-4o-mini`, … */
  model: string;
  /** The enabled channels (`web` always). */
  channels: string[];
  /** What a new user does now, in a sentence. */
  next_step: string;
}

/** The human-readable startup banner (terminals only; JSON logs carry the same facts in one line). */
export function renderBanner(facts: BannerFacts): string {
  const rows: [string, string][] = [
    ['Web UI', pc.bold(facts.web_ui)],
    ['API', facts.url],
    ['Docs', facts.docsUrl],
    ['Listening', facts.listening],
    ['Storage', facts.storage],
    ['Queue', facts.queue],
    ['Worker', facts.worker],
    ['Config', facts.configFile ?? 'built-in defaults (no config.yaml)'],
    ['Model', facts.model],
    ['Channels', facts.channels.join(', ')],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    '',
    `  ${pc.bold('Switchboard')} ${pc.dim(`v${facts.version}`)}`,
    '',
    ...rows.map(([name, value]) => `  ${pc.dim(name.padEnd(width))}  ${value}`),
    '',
    `  ${pc.green('Next:')} ${facts.next_step}`,
    '',
  ].join('\n');
}

/** How the model is described: the provider, and the model name when it is not the built-in one. */
export function describeModel(provider: string, model: string): string {
  return provider === 'builtin' ? 'builtin (offline, no key needed; set SERVICE_LLM_PROVIDER for a real model)' : `${provider} ${model}`;
}

/** The sentence that tells a new user what to do first. */
export function nextStep(webUi: string, built: boolean): string {
  if (!built) return `build the Web UI (npm run build:web), then open ${webUi} and create the first account: it becomes the admin.`;
  return `open ${webUi} and create the first account (it becomes the admin), or sign in.`;
}

/** The address the hub is reached at: `server.public_url`, else the host it listens on and its port. */
export function serviceUrl(server: { public_url?: string | null; host: string }, port: number): string {
  return server.public_url ?? `http://${displayHost(server.host)}:${port}`;
}

/** A wildcard address means this machine; an IPv6 address goes in brackets. */
function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? 'localhost' : host.includes(':') ? `[${host}]` : host;
}
