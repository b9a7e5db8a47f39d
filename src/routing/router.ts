import type { ContactRow, WorkflowRow } from '../db/models';
import { literalHaystack, requiredLiteral } from './regex-literal';
import { stems } from './text';
import { compileTrigger, type TriggerRegex } from './trigger-regex';

/** A workflow's triggers, prepared once per change so routing a message costs the same at any history length. */
interface CompiledWorkflow {
  id: string;
  name: string;
  bindings: string[];
  /** Each keyword as its stem sequence (a phrase matches as a phrase). */
  keywords: string[][];
  /** The keywords as written, index for index with `keywords` (for explanations). */
  keywordText: string[];
  /**
   * Each regex (linear-time, reading a bounded prefix: trigger-regex.ts) with a literal every match
   * contains (lowercased), or null: the regex runs only when the message has it. A stored pattern
   * the linear-time engine refuses (saved before it was used: a lookaround, a backreference) never matches.
   */
  regex: { pattern: TriggerRegex; literal: string | null }[];
  contactTags: Set<string>;
  minScore: number;
  /** `default: true`: the fallback of the channels it is bound to. */
  isDefault: boolean;
}

/**
 * Why a workflow was picked: `channel_default` is the workflow marked `default: true` for the
 * message's channel; `default` means none (the config's default prompt and tools).
 */
export const ROUTE_REASONS = ['metadata', 'contact', 'trigger', 'session', 'channel_default', 'default'] as const;
export type RouteReason = (typeof ROUTE_REASONS)[number];

export interface RouteInput {
  text: string;
  /** `web`, `slack`, `slack:<channel id>`, `telegram:<chat id>` … */
  channel: string;
  /** `metadata.workflow`: a name chosen by the sender. */
  requestedWorkflow?: string | null;
  contact?: Pick<ContactRow, 'tags' | 'workflow_id'> | null;
  sessionWorkflowId?: string | null;
}

/** One workflow's trigger score for a message, with what matched (see Router.explain). */
export interface TriggerScore {
  workflowId: string;
  name: string;
  /** Bound to the message's channel: only bound workflows compete on triggers. */
  bound: boolean;
  score: number;
  minScore: number;
  /** Bound, and the score reaches min_score (and is above 0). */
  matches: boolean;
  matched: { keywords: string[]; regex: string[]; contactTags: string[] };
}

export interface RouteDecision {
  workflowId: string | null;
  reason: RouteReason;
  score?: number;
}

/** The default minimum score (decisions.md §4). */
export const DEFAULT_MIN_SCORE = 1;

/**
 * Picks the workflow for a message (decisions.md §4), first match wins: metadata.workflow → the
 * contact's bound workflow → the best trigger score among workflows bound to the channel → the
 * session's current workflow → the config default (null). Score: each distinct keyword present
 * (stemmed words; phrases as phrases) 1, each matching regex 2, each contact tag the contact carries
 * 1; below min_score no match; ties go to the alphabetically first name.
 */
export class Router {
  private workflows: CompiledWorkflow[] = [];
  private byName = new Map<string, CompiledWorkflow>();
  /** The workflows bound to each channel seen since the last load (few channels, many messages). */
  private byChannel = new Map<string, CompiledWorkflow[]>();
  /** Each channel's `default: true` workflow (or none), by channel seen since the last load. */
  private defaults = new Map<string, CompiledWorkflow | null>();

  constructor(rows: readonly WorkflowRow[] = []) {
    this.load(rows);
  }

  /** Recompiles every workflow's triggers (call on every workflow change). */
  load(rows: readonly WorkflowRow[]): void {
    this.workflows = [...rows]
      .sort((a, b) => a.name.localeCompare(b.name))
      .map((row) => ({
        id: row.id,
        name: row.name,
        bindings: row.binding_channels,
        keywords: row.triggers.keywords.map((keyword) => stems(keyword)).filter((sequence) => sequence.length > 0),
        keywordText: row.triggers.keywords.filter((keyword) => stems(keyword).length > 0),
        regex: row.triggers.regex.flatMap((source) => {
          const { regex } = compileTrigger(source);
          return regex ? [{ pattern: regex, literal: requiredLiteral(source) }] : [];
        }),
        contactTags: new Set(row.triggers.contact_tags),
        minScore: row.triggers.min_score ?? DEFAULT_MIN_SCORE,
        isDefault: row.default ?? false,
      }));
    this.byName = new Map(this.workflows.map((workflow) => [workflow.name, workflow]));
    this.byChannel.clear();
    this.defaults.clear();
  }

  get size(): number {
    return this.workflows.length;
  }

  route(input: RouteInput): RouteDecision {
    if (input.requestedWorkflow) {
      const requested = this.byName.get(input.requestedWorkflow);
      if (requested) return { workflowId: requested.id, reason: 'metadata' };
    }
    if (input.contact?.workflow_id && this.workflows.some((workflow) => workflow.id === input.contact!.workflow_id)) {
      return { workflowId: input.contact.workflow_id, reason: 'contact' };
    }
    const best = this.bestTrigger(input);
    if (best) return { workflowId: best.workflow.id, reason: 'trigger', score: best.score };
    if (input.sessionWorkflowId && this.workflows.some((workflow) => workflow.id === input.sessionWorkflowId)) {
      return { workflowId: input.sessionWorkflowId, reason: 'session' };
    }
    const fallback = this.defaultFor(input.channel);
    if (fallback) return { workflowId: fallback.id, reason: 'channel_default' };
    return { workflowId: null, reason: 'default' };
  }

  /**
   * The channel's `default: true` workflow: the one bound most narrowly (`slack:C1` before `slack`),
   * then the alphabetically first (the trigger rule's tie-break; a second default draws a warning at save).
   */
  private defaultFor(channel: string): CompiledWorkflow | null {
    let found = this.defaults.get(channel);
    if (found !== undefined) return found;
    found = null;
    let narrowest = -1;
    for (const workflow of this.workflows) {
      if (!workflow.isDefault) continue;
      for (const binding of workflow.bindings) {
        if (bindingCovers(binding, channel) && binding.length > narrowest) [found, narrowest] = [workflow, binding.length];
      }
    }
    this.defaults.set(channel, found);
    return found;
  }

  /**
   * The decision `route` makes for this input, plus every workflow's trigger score and what
   * matched: for the routing test box, not the hot path (it scores every workflow, bound or not).
   */
  explain(input: RouteInput): { decision: RouteDecision; scores: TriggerScore[] } {
    const decision = this.route(input);
    const words = stems(input.text);
    const positions = positionsOf(words);
    const tags = new Set(input.contact?.tags ?? []);
    const haystack = literalHaystack(input.text);
    const scores = this.workflows.map((workflow): TriggerScore => {
      const matched = {
        keywords: workflow.keywordText.filter((_keyword, index) => containsSequence(words, positions, workflow.keywords[index]!)),
        // The same prefilter and bounds as routing: the test box costs what a message costs.
        regex: workflow.regex.filter((entry) => regexMatches(entry, haystack, input.text)).map((entry) => entry.pattern.source),
        contactTags: [...workflow.contactTags].filter((tag) => tags.has(tag)),
      };
      const score = matched.keywords.length + 2 * matched.regex.length + matched.contactTags.length;
      const bound = workflow.bindings.some((binding) => bindingCovers(binding, input.channel));
      return {
        workflowId: workflow.id,
        name: workflow.name,
        bound,
        score,
        minScore: workflow.minScore,
        matches: bound && score > 0 && score >= workflow.minScore,
        matched,
      };
    });
    return { decision, scores };
  }

  /** Score of every workflow bound to the channel; the sorted list makes the first best the alphabetical one. */
  private bestTrigger(input: RouteInput): { workflow: CompiledWorkflow; score: number } | null {
    let candidates = this.byChannel.get(input.channel);
    if (!candidates) {
      candidates = this.workflows.filter((workflow) => workflow.bindings.some((binding) => bindingCovers(binding, input.channel)));
      this.byChannel.set(input.channel, candidates);
    }
    if (candidates.length === 0) return null;
    const words = stems(input.text);
    const positions = new Map<string, number[]>();
    for (const [index, word] of words.entries()) {
      const list = positions.get(word);
      if (list) list.push(index);
      else positions.set(word, [index]);
    }
    const tags = new Set(input.contact?.tags ?? []);
    const haystack = literalHaystack(input.text);
    let best: { workflow: CompiledWorkflow; score: number } | null = null;
    for (const workflow of candidates) {
      let score = 0;
      for (const keyword of workflow.keywords) if (containsSequence(words, positions, keyword)) score += 1;
      for (const entry of workflow.regex) if (regexMatches(entry, haystack, input.text)) score += 2;
      for (const tag of workflow.contactTags) if (tags.has(tag)) score += 1;
      if (score < workflow.minScore || score === 0) continue;
      if (!best || score > best.score) best = { workflow, score };
    }
    return best;
  }
}

function regexMatches(entry: CompiledWorkflow['regex'][number], haystack: string, text: string): boolean {
  return (entry.literal === null || haystack.includes(entry.literal)) && entry.pattern.test(text);
}

/** `slack` covers `slack` and `slack:C1`; `slack:C1` covers only itself. */
export function bindingCovers(binding: string, channel: string): boolean {
  return binding === channel || channel.startsWith(`${binding}:`);
}

function positionsOf(words: readonly string[]): Map<string, number[]> {
  const positions = new Map<string, number[]>();
  for (const [index, word] of words.entries()) positions.set(word, [...(positions.get(word) ?? []), index]);
  return positions;
}

function containsSequence(words: readonly string[], positions: Map<string, number[]>, sequence: readonly string[]): boolean {
  const starts = positions.get(sequence[0]!);
  if (!starts) return false;
  if (sequence.length === 1) return true;
  return starts.some((start) => sequence.every((stem, offset) => words[start + offset] === stem));
}
