import type { ScriptedProvider } from '../../fakes/scripted-provider';
import type { TestTools } from '../../fakes/test-tools';

/**
 * One channel adapter as the contract suite drives it: the whole hub with that channel on, against
 * its platform's fake server (or, for the web channel, real REST and WebSocket clients), a scripted
 * model and fixture tools. Each harness speaks its platform's own wire format; the suite
 * (../channel-adapters.test.ts) runs the same cases on all of them.
 */
export interface ChannelUnderTest {
  /** The registry name (`adapters/index.ts`). */
  readonly name: string;
  readonly provider: ScriptedProvider;
  readonly tools: TestTools;
  /** http://127.0.0.1:<port>/api/v1 */
  readonly api: string;
  /** The first registered user: an admin, who sees every session. */
  readonly adminToken: string;
  /** A new conversation: a DM, a private chat, a web session. */
  conversation(): Promise<Conversation>;
  stop(): Promise<void>;
}

/** A platform delivery that can be delivered again, as the platform retries it. */
export interface Delivery {
  redeliver(): Promise<void>;
}

export interface Conversation {
  /** The session key the hub should keep it under (`<channel>::<conversation>`), null for a web session. */
  readonly expectedKey: string | null;
  /** The binding channel its session should route as (`slack:D12`, `telegram:5`, `web`). */
  readonly expectedBinding: string;
  /** The id of the session it lives in, once a message went in. */
  sessionId(): Promise<string>;
  /**
   * A person's message, delivered as the platform delivers it; resolves once the hub took it in.
   * Null where the protocol never delivers a message twice (the webchat widget's socket).
   */
  send(text: string): Promise<Delivery | null>;
  /**
   * Resolves once the person sees the turn under way: the beginning of the answer (`prefix`; streamed,
   * drafted or edited) where the platform shows unfinished text, else its typing indicator.
   */
  showsWorking(prefix: string): Promise<void>;
  /** Resolves once the person sees the finished answer `text`. */
  showsAnswer(text: string): Promise<void>;
  /** Resolves once a confirmation is asked; `offered` is the actions shown (null where the protocol lists none). */
  confirmation(): Promise<{ offered: string[] | null; answer(action: string): Promise<void> }>;
  /** Resolves with the text the person is shown when the turn fails. */
  failureShown(): Promise<string>;
  /** Every text the person has been shown in this conversation so far. */
  shown(): string[];
}
