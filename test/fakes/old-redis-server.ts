import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';

/**
 * A server that speaks Redis's protocol (RESP2) as an older Redis would: `INFO` reports the given
 * `redis_version`, `HELLO` is unknown (as before Redis 6), `PING` answers `PONG`, anything else `OK`.
 * Enough for a client to connect and for the hub's startup checks to read the version.
 */
export class OldRedisServer {
  private readonly server: Server = createServer((socket) => this.serve(socket));
  readonly commands: string[] = [];

  constructor(private readonly version: string) {}

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    return `redis://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private serve(socket: Socket): void {
    let buffered = '';
    socket.on('error', () => undefined);
    socket.on('data', (chunk) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        const parsed = readCommand(buffered);
        if (!parsed) return;
        buffered = buffered.slice(parsed.length);
        socket.write(this.answer(parsed.args));
      }
    });
  }

  private answer(args: string[]): string {
    const name = (args[0] ?? '').toUpperCase();
    this.commands.push(name);
    if (name === 'INFO') return bulk(`# Server\r\nredis_version:${this.version}\r\nredis_mode:standalone\r\n# Persistence\r\nloading:0\r\n`);
    if (name === 'PING') return '+PONG\r\n';
    if (name === 'HELLO') return "-ERR unknown command 'HELLO'\r\n";
    return '+OK\r\n';
  }
}

function bulk(text: string): string {
  return `$${Buffer.byteLength(text, 'latin1')}\r\n${text}\r\n`;
}

/** One `*<n>` array of `$<len>` bulk strings from the start of `text`, or null while it is incomplete. */
function readCommand(text: string): { args: string[]; length: number } | null {
  if (!text.startsWith('*')) return null;
  let at = text.indexOf('\r\n');
  if (at < 0) return null;
  const count = Number(text.slice(1, at));
  at += 2;
  const args: string[] = [];
  for (let index = 0; index < count; index += 1) {
    const lineEnd = text.indexOf('\r\n', at);
    if (lineEnd < 0) return null;
    const size = Number(text.slice(at + 1, lineEnd));
    const start = lineEnd + 2;
    if (text.length < start + size + 2) return null;
    args.push(text.slice(start, start + size));
    at = start + size + 2;
  }
  return { args, length: at };
}
