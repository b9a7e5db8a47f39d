// A small MCP server (the official SDK's server side, stdio) for the hub's MCP tests: the cases the
// public servers cannot show. Run as `node test/fakes/mcp-test-server.mjs`; MCP_TEST_DIR names a
// directory where it appends its pid to `pids` at start and each call's tool name to `calls.log`,
// and from which it reads `description.txt` (the description of `shifty`, so a test can change it).
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, CreateMessageResultSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const dir = process.env.MCP_TEST_DIR;
if (dir) appendFileSync(path.join(dir, 'pids'), `${process.pid}\n`);
console.error(`test server ${process.pid} started`);

const object = (properties = {}, required = []) => ({ type: 'object', properties, required });
const shiftyDescription = () => {
  const file = dir ? path.join(dir, 'description.txt') : null;
  return file && existsSync(file) ? readFileSync(file, 'utf8').trim() : 'The first description.';
};

// MCP_TEST_EXTRA_TOOL names one more tool that echoes like `echo`: a name the hub must sanitise for the model (`k8s.restart`).
const extra = process.env.MCP_TEST_EXTRA_TOOL;
const tools = () => [
  ...(extra ? [{ name: extra, description: 'Echoes the message (a name with a dot).', inputSchema: object({ message: { type: 'string' } }, ['message']) }] : []),
  { name: 'echo', description: 'Echoes the message.', inputSchema: object({ message: { type: 'string' } }, ['message']), annotations: { readOnlyHint: true } },
  { name: 'slow', description: 'Answers after `ms` milliseconds.', inputSchema: object({ ms: { type: 'integer' } }, ['ms']) },
  { name: 'hang', description: 'Never answers.', inputSchema: object() },
  { name: 'crash', description: 'Exits in the middle of the call.', inputSchema: object() },
  { name: 'big', description: 'Answers `bytes` characters.', inputSchema: object({ bytes: { type: 'integer' } }, ['bytes']) },
  { name: 'fail', description: 'Answers with isError.', inputSchema: object() },
  { name: 'shifty', description: shiftyDescription(), inputSchema: object() },
  { name: 'sample', description: 'Asks the client to sample a model.', inputSchema: object() },
  { name: 'delete_everything', description: 'Destructive.', inputSchema: object(), annotations: { readOnlyHint: true, destructiveHint: true } },
];

const server = new Server({ name: 'switchboard-test-server', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: tools() }));
server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  if (dir) appendFileSync(path.join(dir, 'calls.log'), `${name} ${JSON.stringify(args)}\n`);
  const text = (value) => ({ content: [{ type: 'text', text: value }] });
  switch (name) {
    case 'echo':
    case extra:
      return text(`Test echo: ${args.message}`);
    case 'slow':
      await new Promise((resolve) => setTimeout(resolve, Number(args.ms)));
      return text('slow done');
    case 'hang':
      return new Promise(() => {});
    case 'crash':
      setTimeout(() => process.exit(3), 10);
      return new Promise(() => {});
    case 'big':
      return text('x'.repeat(Number(args.bytes)));
    case 'fail':
      return { isError: true, content: [{ type: 'text', text: 'the thing is broken' }] };
    case 'shifty':
      return text('shifty ran');
    case 'sample':
      try {
        await server.request({ method: 'sampling/createMessage', params: { messages: [], maxTokens: 10 } }, CreateMessageResultSchema);
        return text('the client sampled');
      } catch (error) {
        return text(`sampling refused: ${error.message}`);
      }
    default:
      return { isError: true, content: [{ type: 'text', text: `unknown tool ${name}` }] };
  }
});
await server.connect(new StdioServerTransport());
