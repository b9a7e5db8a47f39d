import { openAiChunk, openAiTextReply } from '../fakes/openai-server';
import { OtlpReceiver } from '../fakes/otlp-receiver';
import type { ScriptedReply } from '../fakes/scripted-http-server';
import { startChatCluster, type ChatCluster } from '../helpers/chat-cluster';
import { jsonBody, request } from '../helpers/http';
import { makeTempDir, removeTempDirs } from '../helpers/temp-dir';
import { TEST_SERVER, eventually, isRunning, testServerCalls, testServerPids } from './mcp-servers';

jest.setTimeout(120_000);

/**
 * Across processes (PostgreSQL and Redis, two API processes and a worker): the worker runs MCP
 * tools; a worker SIGKILLed in the middle of an MCP call leaves no server process behind, and the
 * turn, taken over by another worker, never runs that call a second time.
 */
let cluster: ChatCluster;
let dir: string;
let receiver: OtlpReceiver;

beforeAll(async () => {
  dir = makeTempDir();
  receiver = new OtlpReceiver();
  await receiver.start();
  const config = [
    'traces:',
    `  otlp_url: ${receiver.url}`,
    'mcp:',
    '  servers:',
    '    test:',
    `      command: ${JSON.stringify(process.execPath)}`,
    `      args: [${JSON.stringify(TEST_SERVER)}]`,
    `      env: { MCP_TEST_DIR: ${JSON.stringify(dir)} }`,
    '      confirm: never',
  ].join('\n');
  cluster = await startChatCluster({ config });
  const workflow = { name: 'ops', system_prompt: 'Operations.', tool_list: 'test.echo, test.slow' };
  expect((await cluster.admin('POST', '/assistant/workflows', workflow)).status).toBe(201);
});

afterAll(async () => {
  await cluster?.stop();
  await receiver?.stop();
  removeTempDirs();
});

function toolCall(id: string, name: string, input: Record<string, unknown>): ScriptedReply {
  return {
    kind: 'stream',
    events: [
      openAiChunk.delta({ role: 'assistant', content: '' }),
      openAiChunk.toolCall({ index: 0, id, type: 'function', function: { name, arguments: JSON.stringify(input) } }),
      openAiChunk.finish('tool_calls'),
      openAiChunk.usage(20, 5),
      openAiChunk.done(),
    ],
  };
}

async function ask(text: string): Promise<any> {
  const sessionId = (await cluster.admin('POST', '/sessions', { workflow: 'ops' })).body.data.id as string;
  const sent = await request(
    `${cluster.apis[1]}/api/v1/sessions/${sessionId}/messages?sync=true`,
    jsonBody({ text }, { authorization: `Bearer ${cluster.adminToken}` }),
  );
  expect(sent.status).toBe(200);
  return sent.body.data;
}

it('every process supervises its own servers, and the worker runs the call', async () => {
  // A, B and the worker each start the server.
  await eventually(() => testServerPids(dir).length === 3, 'three server processes');
  cluster.model.enqueue(toolCall('call_echo', 'test__echo', { message: 'from the worker' }), openAiTextReply(['Echoed.']));
  const done = await ask('echo');
  expect(done.text).toBe('Echoed.');
  expect(testServerCalls(dir)).toEqual(['echo {"message":"from the worker"}']);
  const toolMessage = cluster.model.requests[cluster.model.requests.length - 1]!.body.messages as { role: string; content: string }[];
  expect(toolMessage.find((message) => message.role === 'tool')!.content).toContain('Test echo: from the worker');

  // The call is a client span of the worker, under the tool's span.
  const [call] = await receiver.waitFor((span) => span.name === 'mcp tools/call test.echo');
  expect(call!.attributes).toMatchObject({ 'mcp.server': 'test', 'mcp.tool': 'echo', 'rpc.system': 'mcp' });
  expect(call!.kind).toBe(3); // SPAN_KIND_CLIENT
  expect(call!.resource['service.instance.role']).toBe('worker');
  const [parent] = await receiver.waitFor((span) => span.spanId === call!.parentSpanId);
  expect(parent).toMatchObject({ name: 'execute_tool test__echo', traceId: call!.traceId });
});

it('a worker killed mid-call leaves no server running, and the call is never run twice', async () => {
  const worker = cluster.processes.find((child) => child.child.spawnargs.some((arg) => arg.endsWith('worker-main.js')))!;
  const serversBefore = testServerPids(dir);
  cluster.model.enqueue(toolCall('call_slow', 'test__slow', { ms: 60_000 }), openAiTextReply(['The slow call did not finish.']));
  const answer = ask('be slow');
  await eventually(() => testServerCalls(dir).some((line) => line.startsWith('slow')), 'the slow call reached the server');
  worker.child.kill('SIGKILL');
  await worker.exited;
  // The killed worker's server (the one that got the call) ends with it; the API processes' stay.
  const stillRunning = () => serversBefore.filter(isRunning);
  await eventually(() => stillRunning().length === 2, "the killed worker's server ended");

  await cluster.startWorker();
  const done = await answer;
  expect(done.text).toBe('The slow call did not finish.');
  expect(testServerCalls(dir).filter((line) => line.startsWith('slow'))).toHaveLength(1);
  const lastRequest = cluster.model.requests[cluster.model.requests.length - 1]!.body.messages as { role: string; content: string }[];
  expect(lastRequest.filter((message) => message.role === 'tool').pop()!.content).toMatch(/already started before an interruption/);
});
