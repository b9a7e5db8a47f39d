/**
 * The model server of the real-path benchmarks, in a process of its own: the fake vendor servers of
 * the tests (test/fakes), answering every request with BENCH_ANSWER_TOKENS tokens streamed as the
 * vendor does: `BENCH_MODEL_VENDOR=openai`: chat.completion.chunk events, one per token, then
 * finish, the `stream_options.include_usage` usage chunk and `data: [DONE]`; `anthropic`:
 * message_start, content_block_start, a content_block_delta per token, content_block_stop,
 * message_delta with usage, message_stop. One write per event (BENCH_TOKEN_DELAY_MS apart; 0: at
 * once). Prints `bench model ready <base URL> times <port>`.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { anthropicTextReply, FakeAnthropicServer } from '../../test/fakes/anthropic-server';
import { FakeOpenAiServer, openAiTextReply } from '../../test/fakes/openai-server';
import { wordTokens } from './models';

const vendor = process.env.BENCH_MODEL_VENDOR ?? 'openai';
if (vendor !== 'openai' && vendor !== 'anthropic') throw new Error(`BENCH_MODEL_VENDOR: openai or anthropic, not ${vendor}`);
const tokens = wordTokens(Number(process.env.BENCH_ANSWER_TOKENS ?? '20'));
const delayMs = Number(process.env.BENCH_TOKEN_DELAY_MS ?? '0');
const server = vendor === 'openai' ? new FakeOpenAiServer() : new FakeAnthropicServer();
const reply =
  vendor === 'openai' ? openAiTextReply(tokens, { prompt: 40, completion: tokens.length }) : anthropicTextReply(tokens, { input: 40, output: tokens.length });
// The server's own time per request (arrival → first event written), read and cleared by the bench
// over a second port (`GET /`): the model's time, which the first-token goal excludes. `GET /marks`:
// the same requests' arrival and first event as wall-clock times (ms since the epoch, µs precision),
// to place them between a turn's user_message and its first token frame (bench/first-token-split.ts).
let times: number[] = [];
let marks: [number, number][] = [];
server.answerEvery(
  { ...reply, ...(delayMs > 0 ? { delayMs } : {}) },
  {
    record: false,
    onFirstEvent: (ms) => {
      times.push(ms);
      const firstEventAt = performance.timeOrigin + performance.now();
      marks.push([firstEventAt - ms, firstEventAt]);
    },
  },
);
const timesServer = http.createServer((request, response) => {
  if (request.url === '/marks') {
    response.end(JSON.stringify(marks));
    marks = [];
    return;
  }
  response.end(JSON.stringify(times));
  times = [];
});

void Promise.all([server.start(), new Promise<void>((resolve) => timesServer.listen(0, '127.0.0.1', resolve))]).then(([url]) =>
  process.stdout.write(`bench model ready ${url} times ${(timesServer.address() as AddressInfo).port}\n`),
);
process.on('SIGTERM', () => void server.stop().then(() => process.exit(0)));
