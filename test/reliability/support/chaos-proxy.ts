import net from 'node:net';

/**
 * A TCP proxy between the hub's processes and PostgreSQL that a test can cut (an outage: every
 * connection dropped, new ones refused, as when the server stops) and that reads the client side of
 * the PostgreSQL protocol well enough to stop one statement on its way: `holdStatement` catches the
 * next execution of a named prepared statement (its Bind message) whose parameters match, so a test
 * can prove a worker is storing a reply at this very moment, and kill it there.
 */
export class PgChaosProxy {
  private server: net.Server | null = null;
  private readonly links = new Set<Link>();
  private readonly holds: StatementHold[] = [];
  private listening = false;
  port = 0;

  constructor(private readonly target: { host: string; port: number }) {}

  async start(port = 0): Promise<number> {
    const server = net.createServer((client) => this.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
    });
    this.server = server;
    this.port = (server.address() as net.AddressInfo).port;
    this.listening = true;
    return this.port;
  }

  /** PostgreSQL "stops": every connection is cut and the port refuses new ones until `restore`. */
  async cut(): Promise<void> {
    this.listening = false;
    const server = this.server;
    this.server = null;
    for (const link of this.links) link.destroy();
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** PostgreSQL is back, on the same port. */
  async restore(): Promise<void> {
    await this.start(this.port);
  }

  get up(): boolean {
    return this.listening;
  }

  /**
   * Holds the next execution of prepared statement `name` whose text parameters satisfy `matches`:
   * `request` keeps the statement from the server (it never runs); `response` lets it run and keeps
   * the server's answer from the client (it ran, the client never learns). Resolves with the client
   * side's port (to find its process) once held; the link stays held until it closes.
   */
  holdStatement(name: string, matches: (parameters: (string | null)[]) => boolean, where: 'request' | 'response'): Promise<{ clientPort: number }> {
    return new Promise((resolve) => this.holds.push({ name, matches, where, resolve }));
  }

  async stop(): Promise<void> {
    this.holds.length = 0;
    await this.cut();
  }

  private accept(client: net.Socket): void {
    if (!this.listening) return void client.destroy();
    const upstream = net.connect(this.target.port, this.target.host);
    const link = new Link(client, upstream, (message) => this.inspect(link, message));
    this.links.add(link);
    link.closed.then(
      () => this.links.delete(link),
      () => this.links.delete(link),
    );
  }

  /** Called for every complete client message: decides whether the link holds from here on. */
  private inspect(link: Link, message: Buffer): void {
    if (this.holds.length === 0 || message[0] !== 0x42 /* 'B' */) return;
    const bind = parseBind(message);
    if (!bind) return;
    const index = this.holds.findIndex((hold) => hold.name === bind.statement && hold.matches(bind.parameters));
    if (index < 0) return;
    const [hold] = this.holds.splice(index, 1);
    link.hold(hold!.where);
    hold!.resolve({ clientPort: link.clientPort });
  }
}

interface StatementHold {
  name: string;
  matches: (parameters: (string | null)[]) => boolean;
  where: 'request' | 'response';
  resolve: (held: { clientPort: number }) => void;
}

/** One client connection and its upstream; client bytes are framed into protocol messages. */
class Link {
  readonly closed: Promise<void>;
  readonly clientPort: number;
  private pending: Buffer = Buffer.alloc(0);
  private startup = true;
  private holdRequests = false;
  private holdResponses = false;

  constructor(
    private readonly client: net.Socket,
    private readonly upstream: net.Socket,
    private readonly onMessage: (message: Buffer) => void,
  ) {
    this.clientPort = client.remotePort ?? 0;
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (chunk: Buffer) => this.fromClient(chunk));
    upstream.on('data', (chunk: Buffer) => {
      if (!this.holdResponses) client.write(chunk);
    });
    this.closed = new Promise((resolve) => {
      let open = 2;
      const done = () => {
        open -= 1;
        this.destroy();
        if (open === 0) resolve();
      };
      client.once('close', done);
      upstream.once('close', done);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  }

  /** From the message being inspected on: nothing more reaches the server (`request`), or the client (`response`). */
  hold(where: 'request' | 'response'): void {
    if (where === 'request') this.holdRequests = true;
    else this.holdResponses = true;
  }

  destroy(): void {
    this.client.destroy();
    this.upstream.destroy();
  }

  private fromClient(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    for (;;) {
      if (this.holdRequests) return; // nothing more reaches the server
      const header = this.startup ? 4 : 5;
      if (this.pending.length < header) return;
      const length = this.startup ? this.pending.readInt32BE(0) : this.pending.readInt32BE(1) + 1;
      if (this.pending.length < length) return;
      const message = this.pending.subarray(0, length);
      this.pending = this.pending.subarray(length);
      const wasStartup = this.startup;
      // The startup packet has no type byte; an SSL or GSS request (8 bytes) is answered, then a startup follows.
      if (this.startup && !(length === 8 && message.readInt32BE(4) >= 80877103)) this.startup = false;
      if (!wasStartup) this.onMessage(message);
      if (this.holdRequests) return;
      this.upstream.write(message);
    }
  }
}

/** A Bind message: portal, statement name, then the parameters (text format). */
function parseBind(message: Buffer): { statement: string; parameters: (string | null)[] } | null {
  try {
    let at = 5;
    const cstring = () => {
      const end = message.indexOf(0, at);
      const text = message.toString('utf8', at, end);
      at = end + 1;
      return text;
    };
    cstring(); // portal
    const statement = cstring();
    const formats = message.readInt16BE(at);
    at += 2 + formats * 2;
    const count = message.readInt16BE(at);
    at += 2;
    const parameters: (string | null)[] = [];
    for (let index = 0; index < count; index += 1) {
      const length = message.readInt32BE(at);
      at += 4;
      if (length < 0) parameters.push(null);
      else {
        parameters.push(message.toString('utf8', at, at + length));
        at += length;
      }
    }
    return { statement, parameters };
  } catch {
    return null;
  }
}
