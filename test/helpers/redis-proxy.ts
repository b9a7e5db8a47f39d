import net from 'node:net';

/**
 * A TCP proxy in front of Redis that can lose one reply, the way a Redis restart does: the command
 * reaches Redis and runs, then the connection drops before its answer is back. ioredis sends the
 * commands it got no answer to again once it has reconnected (`autoResendUnfulfilledCommands`, on
 * by default), so the command runs twice — what a restart in the middle of a turn does to the hub.
 */
export class RedisReplyDropProxy {
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private armed: { marker: Buffer; resolve: () => void } | null = null;
  /** How many times a command carrying each marker reached Redis. */
  private readonly forwarded = new Map<string, number>();

  constructor(private readonly target: { host: string; port: number }) {}

  /** Listens on a free loopback port; returns the URL to give ioredis. */
  async start(): Promise<string> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return `redis://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  }

  /**
   * The next command whose bytes contain `marker` goes through and runs; its reply is dropped and
   * the connection cut. Resolves once that happened.
   */
  dropNextReply(marker: string): Promise<void> {
    return new Promise((resolve) => {
      this.armed = { marker: Buffer.from(marker), resolve };
    });
  }

  /** How many times commands carrying `marker` were sent to Redis (counted only for armed markers). */
  sent(marker: string): number {
    return this.forwarded.get(marker) ?? 0;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private accept(client: net.Socket): void {
    const upstream = net.connect(this.target.port, this.target.host);
    this.sockets.add(client).add(upstream);
    let dropping: (() => void) | null = null;
    const close = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('data', (chunk: Buffer) => {
      for (const marker of this.forwarded.keys()) if (chunk.includes(marker)) this.forwarded.set(marker, this.sent(marker) + 1);
      if (this.armed && chunk.includes(this.armed.marker)) {
        const marker = this.armed.marker.toString();
        this.forwarded.set(marker, this.sent(marker) + 1);
        dropping = this.armed.resolve;
        this.armed = null;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!dropping) return void client.write(chunk);
      // Redis ran the command and answered: the answer is lost with the connection.
      const resolve = dropping;
      dropping = null;
      close();
      resolve();
    });
    client.on('error', close);
    upstream.on('error', close);
    client.on('close', close);
    upstream.on('close', close);
  }
}
