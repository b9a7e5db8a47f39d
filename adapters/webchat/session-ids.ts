import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** Random bytes of a widget session id (128 bits: never guessed, never issued twice). */
const RANDOM_BYTES = 16;
/** Bytes of the signature kept (128 bits of HMAC-SHA256). */
const SIGNATURE_BYTES = 16;
const ID_SHAPE = /^([0-9a-f]{32})([0-9a-f]{32})$/;

/**
 * Widget session ids: the hub issues them at `session_request` and the widget keeps them (local
 * storage) across page loads. An id is `<random><signature>` in hex (64 characters), so the hub
 * takes back only ids it issued — a visitor cannot pick or guess one, and a client's own ids (or
 * another server's) get a fresh session — without storing anything. The random half names the
 * conversation (`webchat::<random>`): it is not itself a credential, since without the signature it
 * opens nothing, so it may appear in logs and the admin API.
 */
export class SessionIds {
  private readonly key: Buffer;

  constructor(secret: string | null) {
    this.key = secret === null ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  issue(): { id: string; conversation: string } {
    const conversation = randomBytes(RANDOM_BYTES).toString('hex');
    return { id: conversation + this.sign(conversation), conversation };
  }

  /** The conversation of an id this hub issued, or null for anything else. */
  verify(id: unknown): string | null {
    if (typeof id !== 'string') return null;
    const match = ID_SHAPE.exec(id);
    if (!match) return null;
    const [, conversation, signature] = match as unknown as [string, string, string];
    const expected = Buffer.from(this.sign(conversation), 'hex');
    return timingSafeEqual(expected, Buffer.from(signature, 'hex')) ? conversation : null;
  }

  private sign(conversation: string): string {
    return createHmac('sha256', this.key).update(conversation).digest().subarray(0, SIGNATURE_BYTES).toString('hex');
  }
}
