import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';

// The Switchboard documentation site. `npm run docs` serves it on 127.0.0.1:8001,
// `npm run docs:build` writes static files to docs/.vitepress/dist. Pages under reference/ are
// generated from the code (docs/generate/); never edit them by hand.
export default withMermaid(
  defineConfig({
    title: 'Switchboard',
    description: 'A chat-ops hub: one AI agent on Slack, Telegram and the web, routed by YAML workflows.',
    lang: 'en-GB',
    cleanUrls: true,
    lastUpdated: false,
    // Links to localhost point at the reader's own hub (http://localhost:8000/api/v1/docs).
    ignoreDeadLinks: 'localhostLinks',
    // docs/errors.md is the hand-written source of the error meanings; the site shows it as the
    // generated reference/errors.md. generate/ is the generator's code.
    srcExclude: ['generate/**', 'errors.md', 'node_modules/**'],
    head: [['meta', { name: 'theme-color', content: '#3c6e71' }]],
    markdown: {
      // Dead links fail the build; anchors are checked by test/docs/site.test.ts on the built HTML.
      lineNumbers: false,
      // Bare URLs in prose (`http://localhost:<port>`, example hosts) stay text; real links are written as links.
      linkify: false,
    },
    themeConfig: {
      search: { provider: 'local' },
      outline: { level: [2, 3] },
      nav: [
        { text: 'Get started', link: '/guide/getting-started' },
        { text: 'Concepts', link: '/concepts/channels' },
        { text: 'Guides', link: '/guides/workflows-ci' },
        { text: 'Reference', link: '/reference/rest' },
      ],
      sidebar: [
        {
          text: 'Start',
          items: [{ text: 'Getting started', link: '/guide/getting-started' }],
        },
        {
          text: 'Concepts',
          items: [
            { text: 'Channels and adapters', link: '/concepts/channels' },
            { text: 'Sessions, turns and the event stream', link: '/concepts/sessions-and-turns' },
            { text: 'Workflows and routing', link: '/concepts/workflows-and-routing' },
            { text: 'Tools and confirmations', link: '/concepts/tools' },
            { text: 'Memory and knowledge', link: '/concepts/memory-and-knowledge' },
          ],
        },
        {
          text: 'Guides',
          items: [
            { text: 'Connect a Slack app', link: '/slack' },
            { text: 'Connect a Telegram bot', link: '/telegram' },
            { text: 'Put a chat widget on your website', link: '/webchat' },
            { text: 'Connect Mattermost', link: '/mattermost' },
            { text: 'Workflows as YAML from CI', link: '/guides/workflows-ci' },
            { text: 'Testing workflows', link: '/guides/testing-workflows' },
            { text: 'Scale out', link: '/guides/scale-out' },
            { text: 'Messages sent mid-answer', link: '/guides/mid-turn-policy' },
            { text: 'MCP tools', link: '/guides/mcp-tools' },
            { text: 'Approvals', link: '/guides/approvals' },
            { text: 'Events: webhooks and schedules', link: '/guides/events' },
            { text: 'Behind a reverse proxy', link: '/guides/reverse-proxy' },
            { text: 'SAML single sign-on', link: '/guides/saml' },
            { text: 'Backups and upgrades', link: '/guides/backups-and-upgrades' },
            { text: 'Monitoring', link: '/guides/monitoring' },
            { text: 'Observability and audit', link: '/observability' },
            { text: 'Reliability and security suite', link: '/guides/reliability' },
            { text: 'The Web UI', link: '/guides/web-ui' },
            { text: 'The terminal client', link: '/guides/terminal-client' },
          ],
        },
        {
          text: 'Reference (generated)',
          items: [
            { text: 'REST API', link: '/reference/rest' },
            { text: 'WebSocket protocol', link: '/reference/websocket' },
            { text: 'Configuration keys', link: '/reference/configuration' },
            { text: 'Error codes', link: '/reference/errors' },
            { text: 'CLI commands', link: '/reference/cli' },
            { text: 'Benchmark figures', link: '/reference/benchmarks' },
          ],
        },
        {
          text: 'Project',
          items: [
            { text: 'Performance', link: '/performance' },
            { text: 'Decisions', link: '/decisions' },
            { text: 'Developing Switchboard', link: '/development' },
          ],
        },
      ],
      footer: { message: 'Reference pages are generated from the code by docs/generate/.' },
    },
    mermaid: {},
    // The dev server serves ES modules; mermaid pulls in CommonJS packages that must be pre-bundled
    // (the production build bundles them anyway).
    vite: {
      optimizeDeps: { include: ['mermaid', 'fastdom', 'dayjs', '@braintree/sanitize-url', 'debug', 'cytoscape', 'cytoscape-cose-bilkent'] },
    },
  }),
);
