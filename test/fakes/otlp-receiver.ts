import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as an OTLP/HTTP JSON export carries it, with its resource's attributes beside it. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  resource: Record<string, string | number | boolean>;
}

type OtlpValue = { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };

/**
 * An OpenTelemetry collector's trace endpoint (OTLP/HTTP with JSON bodies, `POST /v1/traces`), as
 * the exporter of a real hub process talks to it: it keeps every span it is sent.
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  private server: Server | null = null;
  url = '';

  async start(): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        if (request.url === '/v1/traces' && request.method === 'POST' && request.headers['content-type']?.includes('application/json')) {
          this.take(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        } else {
          response.writeHead(404).end();
        }
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/v1/traces`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Waits until spans matching `predicate` number at least `count`. */
  async waitFor(predicate: (span: ReceivedSpan) => boolean, count = 1, timeoutMs = 15_000): Promise<ReceivedSpan[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.spans.filter(predicate);
      if (found.length >= count) return found;
      if (Date.now() > deadline) throw new Error(`expected ${count} spans, got ${found.length}; have: ${this.spans.map((span) => span.name).join(', ')}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  private take(body: { resourceSpans?: { resource?: { attributes?: Attribute[] }; scopeSpans?: { spans?: RawSpan[] }[] }[] }): void {
    for (const resourceSpans of body.resourceSpans ?? []) {
      const resource = attributes(resourceSpans.resource?.attributes);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const span of scope.spans ?? []) {
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            attributes: attributes(span.attributes),
            resource,
          });
        }
      }
    }
  }
}

interface Attribute {
  key: string;
  value: OtlpValue;
}

interface RawSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: Attribute[];
}

function attributes(list: Attribute[] | undefined): Record<string, string | number | boolean> {
  const result: Record<string, string | number | boolean> = {};
  for (const { key, value } of list ?? []) {
    result[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.doubleValue ?? value.boolValue ?? ''));
  }
  return result;
}
