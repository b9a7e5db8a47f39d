import { randomUUID } from 'node:crypto';
import { channelOwner, formatSessionKey, type ChannelScope } from '../../core/channel';
import { followTurn } from '../../core/follow-turn';
import type { Hub } from '../../core/hub';
import type { Models } from '../../db/models';
import { bindingCovers, type TriggerScore } from '../../routing/router';
import type { RoutingService } from '../../routing/routing-service';
import type { TestCase } from './case-schema';
import type { CaseTarget, RoutingAnswer, TurnAnswer } from './target';
import { collectTurn } from './turn-collector';

export const HUB_TARGET_DEFAULTS = {
  /** A case's turn that has not ended by then is cancelled and fails (a real model may be slow; the scripted one is not). */
  turnTimeoutMs: 120_000,
};

export interface HubTargetParts {
  routing: RoutingService;
  hub: Hub;
  models: Models;
  channels: readonly ChannelScope[];
  /** Gets the model ready for the case (its script, its recording); throws when it cannot answer it. */
  prepareModel(testCase: TestCase): void;
  /** What the report names: how this hub runs the cases. */
  description: string;
  close(): Promise<void>;
}

/**
 * Runs cases on a hub composed in this process (src/compose/workflow-test-hub.ts): routing through
 * the running router (`RoutingService.explain`, what `POST /assistant/routing/test` answers), a
 * turn as a chat channel's message through the hub port — the case's channel and contact tags in
 * a session of that channel — followed by its id until it ends.
 */
export class HubTarget implements CaseTarget {
  readonly description: string;
  private sessions = 0;

  constructor(
    private readonly parts: HubTargetParts,
    private readonly limits = HUB_TARGET_DEFAULTS,
  ) {
    this.description = parts.description;
  }

  async workflowNames(): Promise<string[]> {
    return (await this.parts.models.Workflow.findAll({ attributes: ['name'] })).map((row) => row.name);
  }

  async route(testCase: TestCase): Promise<RoutingAnswer> {
    this.scopeOf(testCase.channel);
    const { decision, workflow, scores } = await this.parts.routing.explain({
      text: testCase.message,
      channel: testCase.channel,
      requestedWorkflow: null,
      contact: { tags: testCase.contact_tags, workflow_id: null },
      sessionWorkflowId: null,
    });
    return { workflow: workflow?.name ?? null, reason: decision.reason, rule: describeScores(scores) };
  }

  async runTurn(testCase: TestCase): Promise<TurnAnswer> {
    this.parts.prepareModel(testCase);
    const channel = testCase.channel.split(':')[0]!;
    const sessionKey = formatSessionKey(channel, this.conversationFor(testCase.channel));
    // A narrowed channel has one conversation: each case starts it afresh (no workflow kept, its own tags).
    await this.parts.models.Session.update({ active_workflow_id: null }, { where: { session_key: sessionKey } });
    await this.parts.models.Contact.update({ tags: testCase.contact_tags, workflow_id: null }, { where: { session_key: sessionKey } });
    const turnId = randomUUID();
    const ingested = await this.parts.hub.ingest({
      channel,
      sessionKey,
      sender: { userId: channelOwner(channel), contactId: 'switchboard-test', displayName: 'workflow test', tags: testCase.contact_tags },
      text: testCase.message,
      mode: 'normal',
      metadata: {},
      turnId,
    });
    return collectTurn(
      (onFrame) => followTurn(this.parts.hub.events, ingested.sessionId, turnId, { replay: true, onFrame }),
      {
        confirm: async (confirmationId) => void (await this.parts.hub.confirmTool(ingested.sessionId, confirmationId, testCase.expect.confirm ?? 'deny')),
        cancel: () => this.parts.hub.cancelTurn(ingested.sessionId),
      },
      this.limits.turnTimeoutMs,
    );
  }

  close(): Promise<void> {
    return this.parts.close();
  }

  /** The registry's channel a case's `channel` names; an unknown one fails the case. */
  private scopeOf(channel: string): ChannelScope {
    const name = channel.split(':')[0]!;
    const scope = this.parts.channels.find((candidate) => candidate.name === name);
    if (!scope) throw new Error(`channel "${name}" is not a channel of this hub (${this.parts.channels.map((entry) => entry.name).join(', ')})`);
    return scope;
  }

  /** A conversation of the channel's own key format that routes as `channel` (the scope reads keys; we only try shapes). */
  private conversationFor(channel: string): string {
    const [name, narrowed] = channel.split(':') as [string, string | undefined];
    const scope = this.scopeOf(channel);
    this.sessions += 1;
    const id = narrowed ?? `WFTEST${this.sessions}`;
    // Shapes of the registry's chat channels, a session of its own per case first: `<team>:<channel>:<thread>`
    // (Slack), then `<chat id>` (Telegram: a narrowed chat is one conversation, shared by its cases).
    for (const conversation of [`TWFTEST:${id}:${this.sessions}`, id, `TWFTEST:${id}`]) {
      const routed = scope.routingChannel(conversation);
      if (narrowed ? routed === channel : bindingCovers(name, routed)) return conversation;
    }
    throw new Error(`cannot make a ${name} session that routes as "${channel}"`);
  }
}

/** `scores: oncall-runbook 3 (keywords: deploy, 5xx), support-triage 1 (keywords: error)`: what competed. */
function describeScores(scores: readonly TriggerScore[]): string {
  const scored = scores.filter((entry) => entry.score > 0).sort((a, b) => b.score - a.score || a.name.localeCompare(b.name));
  if (scored.length === 0) return 'no trigger matched';
  return `scores: ${scored
    .map((entry) => {
      const matched = [...entry.matched.keywords, ...entry.matched.regex.map((source) => `/${source}/`), ...entry.matched.contactTags.map((tag) => `#${tag}`)];
      const notes = [entry.bound ? null : 'not bound to the channel', entry.score < entry.minScore ? `min_score ${entry.minScore}` : null].filter(Boolean);
      return `${entry.name} ${entry.score} (${matched.join(', ')}${notes.length > 0 ? `; ${notes.join(', ')}` : ''})`;
    })
    .join(', ')}`;
}
