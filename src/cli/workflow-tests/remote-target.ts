import type { FollowedTurn } from '../../core/follow-turn';
import type { SessionFrame } from '../../protocol/frames';
import type { SessionView } from '../../protocol/payloads';
import { TurnOutcomeTracker, type TurnOutcome } from '../../protocol/turn-outcome';
import type { RouteReasonName, TestCase } from '../../workflows/testing/case-schema';
import type { CaseTarget, RoutingAnswer, TurnAnswer } from '../../workflows/testing/target';
import { collectTurn } from '../../workflows/testing/turn-collector';
import { DEFAULTS, type HubClient } from '../api-client';
import { ChatConnection } from '../chat/chat-connection';
import { CliError } from '../exit-codes';

export const REMOTE_TARGET_DEFAULTS = {
  /** A live model may be slow; a case's turn that has not ended by then is cancelled and fails. */
  turnTimeoutMs: 180_000,
};

interface RoutingTestAnswer {
  workflow: string | null;
  reason: RouteReasonName;
  rule: string;
}

/**
 * `workflows test --against URL`: the cases on a live hub, with its workflows and its real model.
 * Routing: `POST /assistant/routing/test` (the case's channel and contact tags). A whole case: a new
 * web session, the message sent with `metadata.workflow` set to the workflow routing picked for
 * the case's channel (a REST session is a web session; routing itself was checked above), followed
 * on the session socket, confirmations answered as the case says; the session is archived after.
 */
export class RemoteTarget implements CaseTarget {
  private constructor(
    private readonly client: HubClient,
    readonly description: string,
    private readonly limits = REMOTE_TARGET_DEFAULTS,
  ) {}

  static async start(client: HubClient, url: string): Promise<RemoteTarget> {
    // Fails early (unreachable, refused key) with the CLI's usual messages.
    await client.get('/auth/me');
    return new RemoteTarget(client, `against ${url} (its workflows and its model)`);
  }

  async workflowNames(): Promise<string[]> {
    const names: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `?limit=${DEFAULTS.pageSize}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`;
      const page: { items: { name: string }[]; next_cursor: string | null; has_more: boolean } = await this.client.get(`/assistant/workflows${query}`);
      names.push(...page.items.map((item) => item.name));
      cursor = page.has_more ? page.next_cursor : null;
    } while (cursor);
    return names;
  }

  async route(testCase: TestCase): Promise<RoutingAnswer> {
    const answer = await this.client.post<RoutingTestAnswer>('/assistant/routing/test', {
      text: testCase.message,
      channel: testCase.channel,
      contact_tags: testCase.contact_tags,
    });
    return { workflow: answer.workflow, reason: answer.reason, rule: answer.rule };
  }

  async runTurn(testCase: TestCase): Promise<TurnAnswer> {
    const routed = await this.route(testCase);
    const session = await this.client.post<SessionView>('/sessions', { name: `workflow test: ${testCase.name}`.slice(0, 200) });
    let connection: ChatConnection | null = null;
    try {
      let turnId: string | null = null;
      const early: SessionFrame[] = [];
      let deliver: ((frame: SessionFrame) => void) | null = null;
      let lost: ((error: CliError) => void) | null = null;
      connection = new ChatConnection(this.client, session.id, {
        onFrame: (frame) => (deliver ? deliver(frame) : early.push(frame)),
        onStop: (error) => lost?.(error),
      });
      await connection.open();
      const open = connection;
      turnId = (await open.send(testCase.message, 'normal', routed.workflow)).id;
      const follow = (onFrame: (frame: SessionFrame) => void): Promise<FollowedTurn> => {
        const tracker = new TurnOutcomeTracker();
        let settle!: (outcome: TurnOutcome) => void;
        const outcome = new Promise<TurnOutcome>((resolve) => (settle = resolve));
        lost = (error) => settle({ kind: 'error', code: 'SERVICE_UNAVAILABLE', message: error.message });
        deliver = (frame) => {
          if (frame.payload.turn_id !== turnId) return;
          onFrame(frame);
          const ended = tracker.next(frame);
          if (ended) settle(ended);
        };
        for (const frame of early.splice(0)) deliver(frame);
        return Promise.resolve({ outcome, stop: () => settle({ kind: 'stopped' }) });
      };
      return await collectTurn(
        follow,
        {
          confirm: async (confirmationId) => {
            await this.client.post(`/sessions/${session.id}/confirmations/${encodeURIComponent(confirmationId)}`, {
              action: testCase.expect.confirm ?? 'deny',
            });
          },
          cancel: () => open.cancel(),
        },
        this.limits.turnTimeoutMs,
      );
    } finally {
      connection?.close();
      await this.client.delete(`/sessions/${session.id}`).catch(() => undefined);
    }
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
