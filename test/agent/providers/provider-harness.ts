import net from 'node:net';
import type { LlmProvider, ProviderChunk, ProviderRequest } from '../../../src/agent/provider';

/** Everything a provider streams for one request. */
export async function collect(provider: LlmProvider, request: Omit<ProviderRequest, 'signal'> & { signal?: AbortSignal }): Promise<ProviderChunk[]> {
  const chunks: ProviderChunk[] = [];
  for await (const chunk of provider.stream({ signal: new AbortController().signal, ...request })) chunks.push(chunk);
  return chunks;
}

/** What a stream throws (fails the test if it does not throw). */
export async function streamError(provider: LlmProvider, request: Omit<ProviderRequest, 'signal'>): Promise<Error> {
  try {
    await collect(provider, request);
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected the stream to fail');
}

export function textOf(chunks: readonly ProviderChunk[]): string {
  return chunks.map((chunk) => (chunk.type === 'text' ? chunk.text : '')).join('');
}

/** A loopback port nothing listens on: bound, then released. */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export const WEATHER_TOOL = {
  name: 'get_weather',
  description: 'The weather in a city.',
  parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'], additionalProperties: false },
};

export const SECRET_KEY = 'sk-test-secret-key-0123456789';
