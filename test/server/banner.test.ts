import { describeModel, nextStep, renderBanner, type BannerFacts } from '../../src/server/banner';

// The start banner a terminal shows (issue 33): the Web UI first, the model, the channels, and a next step.
const facts: BannerFacts = {
  version: '1.2.3',
  web_ui: 'http://localhost:8000/',
  url: 'http://localhost:8000/api/v1',
  docsUrl: 'http://localhost:8000/api/v1/docs',
  listening: '0.0.0.0:8000',
  storage: 'SQLite data/switchboard.sqlite',
  queue: 'in-process (embedded)',
  worker: 'embedded',
  configFile: null,
  model: describeModel('builtin', 'builtin'),
  channels: ['web', 'telegram'],
  next_step: nextStep('http://localhost:8000/', true),
};

const plain = (text: string) => text.replace(/\u001b\[[0-9;]*m/g, '');

describe('the start banner', () => {
  it('leads with the Web UI and ends with what to do next', () => {
    const lines = plain(renderBanner(facts)).split('\n');
    expect(lines.find((line) => line.includes('Web UI'))).toBe('  Web UI     http://localhost:8000/');
    expect(lines.findIndex((line) => line.includes('Web UI'))).toBeLessThan(lines.findIndex((line) => line.includes('API ')));
    expect(lines).toContain('  Model      builtin (offline, no key needed; set SERVICE_LLM_PROVIDER for a real model)');
    expect(lines).toContain('  Channels   web, telegram');
    expect(lines).toContain('  Next: open http://localhost:8000/ and create the first account (it becomes the admin), or sign in.');
  });

  it('names a real model by provider and name, and says how to build a missing Web UI', () => {
    expect(describeModel('openai', 'gpt-4o-mini')).toBe('openai gpt-4o-mini');
    expect(nextStep('http://localhost:8000/', false)).toMatch(/^build the Web UI \(npm run build:web\), then open/);
  });
});
