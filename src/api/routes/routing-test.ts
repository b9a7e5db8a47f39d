import { z } from 'zod';
import { ROUTE_REASONS, type RouteDecision, type TriggerScore } from '../../routing/router';
import type { RoutingService } from '../../routing/routing-service';
import { bindingChannelSchema, WORKFLOW_NAME, triggersSchema } from '../../workflows/workflow-schema';
import type { ApiModule } from '../app';

/** The largest message the test box scores: the same bound as a user message (spec, Limits). */
const MAX_TEXT_CHARS = 65_536;

/** The request; `channel` is one of the hub's channels (the registry's, known at startup). */
const bodyFor = (routing: RoutingService) =>
  z.strictObject({
    text: z.string().min(1).max(MAX_TEXT_CHARS).describe('The message, as a user would send it.'),
    channel: bindingChannelSchema(routing.channels).describe('The channel it arrives on.'),
    workflow: z.string().regex(WORKFLOW_NAME).optional().describe('A `metadata.workflow` the sender gives (wins when such a workflow exists).'),
    contact_tags: triggersSchema.shape.contact_tags.optional().describe("The sending contact's tags, scored by `triggers.contact_tags`."),
  });

const scoreSchema = z.object({
  name: z.string(),
  bound: z.boolean().describe('Bound to the channel; only bound workflows compete on triggers.'),
  score: z.number().int(),
  min_score: z.number(),
  matches: z.boolean().describe('Bound, and the score is above 0 and at least min_score.'),
  matched: z.object({ keywords: z.array(z.string()), regex: z.array(z.string()), contact_tags: z.array(z.string()) }),
});

const resultSchema = z
  .object({
    workflow: z.string().nullable().describe('The workflow that would answer; null: the default prompt and tools (or the session’s current workflow).'),
    reason: z.enum(ROUTE_REASONS),
    score: z.number().nullable(),
    rule: z.string().describe('The rule that decided, in a sentence.'),
    channel: z.string(),
    workflows: z.array(scoreSchema).describe('Every workflow, best score first, then by name.'),
  })
  .meta({ id: 'RoutingTestResult' });

/**
 * `POST /assistant/routing/test`: which workflow would answer a message on a channel, and why
 * (decisions.md §4's rules; docs/decisions.md "Routing test"). Read-only; any user.
 */
export function routingTestRoutes(routing: RoutingService): ApiModule {
  return (api) =>
    api.add({
      method: 'post',
      path: '/assistant/routing/test',
      summary: 'Which workflow would answer a message on a channel, and why (every trigger score)',
      description:
        'Runs the router on a message without sending it: metadata.workflow, then the best trigger score among the workflows bound to the channel, ' +
        'then the default. Contact bindings and the session’s current workflow are not simulated.',
      tags: ['workflows'],
      access: 'user',
      body: bodyFor(routing),
      response: { status: 200, description: 'The decision, the rule, and each workflow’s score.', data: resultSchema },
      handler: async ({ body: input }) => {
        const { decision, workflow, scores } = await routing.explain({
          text: input.text,
          channel: input.channel,
          requestedWorkflow: input.workflow ?? null,
          contact: input.contact_tags ? { tags: input.contact_tags, workflow_id: null } : null,
        });
        return {
          workflow: workflow?.name ?? null,
          reason: decision.reason,
          score: decision.score ?? null,
          rule: ruleSentence(decision, workflow?.name ?? null, input, scores),
          channel: input.channel,
          workflows: [...scores]
            .sort((a, b) => b.score - a.score || a.name.localeCompare(b.name))
            .map((entry) => ({
              name: entry.name,
              bound: entry.bound,
              score: entry.score,
              min_score: entry.minScore,
              matches: entry.matches,
              matched: { keywords: entry.matched.keywords, regex: entry.matched.regex, contact_tags: entry.matched.contactTags },
            })),
        };
      },
    });
}

function ruleSentence(decision: RouteDecision, name: string | null, input: z.infer<ReturnType<typeof bodyFor>>, scores: TriggerScore[]): string {
  const requestedMissing =
    input.workflow && decision.reason !== 'metadata' ? ` (metadata.workflow "${input.workflow}" names no workflow, so it was ignored)` : '';
  switch (decision.reason) {
    case 'metadata':
      return `metadata.workflow names "${name}": the sender's choice wins over every other rule.`;
    case 'trigger': {
      const tied = scores.filter((entry) => entry.matches && entry.score === decision.score).length > 1;
      return `"${name}" has the highest trigger score (${decision.score}) among the workflows bound to ${input.channel}${tied ? '; the tie goes to the alphabetically first name' : ''}${requestedMissing}.`;
    }
    case 'default': {
      const bound = scores.filter((entry) => entry.bound);
      const why =
        bound.length === 0
          ? `No workflow is bound to ${input.channel}`
          : `None of the ${bound.length} workflow${bound.length === 1 ? '' : 's'} bound to ${input.channel} reached its min_score`;
      return `${why}${requestedMissing}: the session's current workflow answers if it has one, otherwise the default system prompt and tools.`;
    }
    case 'channel_default':
      return `No workflow bound to ${input.channel} reached its min_score${requestedMissing}: "${name}" answers, the channel's default workflow (default: true).`;
    case 'contact':
    case 'session':
      // Not simulated here (no contact binding or session in the request), but named if the router says so.
      return `Decided by the ${decision.reason} rule.`;
  }
}
