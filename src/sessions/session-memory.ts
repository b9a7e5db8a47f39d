import { Op } from 'sequelize';
import { MEMORY_MODES, systemWithSummary, tokensOf, type MemoryMode } from '../agent/memory';
import type { ChatMessage } from '../agent/provider';
import type { Models, SessionRow } from '../db/models';

export interface MemoryView {
  mode: MemoryMode;
  summary: string | null;
  window_messages: number;
  summarized_messages: number;
  tokens_used: number;
  context_window: number;
  updated_at: string | null;
}

/** A session's memory as the API shows and edits it (decisions.md §3). */
export class SessionMemory {
  constructor(
    private readonly models: Models,
    private readonly settings: { systemPrompt: string; contextWindow: number },
  ) {}

  async view(session: SessionRow): Promise<MemoryView> {
    const rows = await this.models.Message.findAll({ where: { session_id: session.id }, order: [['ordinal', 'ASC']] });
    const counted = rows.filter((row) => !row.metadata?.command && row.role !== 'system');
    const through = session.memory_through ?? 0;
    const window = counted.filter((row) => row.ordinal > through);
    const messages: ChatMessage[] = window.map((row) =>
      row.role === 'tool' ? { role: 'tool', toolCallId: '', name: '', content: row.content } : { role: row.role as 'user' | 'assistant', content: row.content },
    );
    return {
      mode: session.memory_mode as MemoryMode,
      summary: session.memory_summary,
      window_messages: window.length,
      summarized_messages: counted.length - window.length,
      tokens_used: tokensOf([systemWithSummary(this.settings.systemPrompt, session.memory_summary), ...messages]),
      context_window: this.settings.contextWindow,
      updated_at: session.memory_updated_at ? session.memory_updated_at.toISOString() : null,
    };
  }

  async setMode(session: SessionRow, mode: MemoryMode): Promise<MemoryView> {
    session.memory_mode = mode;
    session.memory_updated_at = new Date();
    await session.save();
    return this.view(session);
  }

  /** Forgets the conversation so far: the summary is dropped and every message until now leaves the context (the history stays). */
  async clear(session: SessionRow): Promise<MemoryView> {
    const last = (await this.models.Message.max('ordinal', { where: { session_id: session.id, ordinal: { [Op.gt]: 0 } } })) as number | null;
    session.memory_summary = null;
    session.memory_through = last ?? session.memory_through ?? null;
    session.memory_updated_at = new Date();
    await session.save();
    return this.view(session);
  }
}

export { MEMORY_MODES };
