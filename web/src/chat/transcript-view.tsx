import { duration } from '../lib/format';
import { describeError, type AssistantItem, type ToolCallView, type TranscriptItem } from './transcript';

const EXAMPLES = ['/info', '/help', 'What time is it in Tokyo?', 'calculate 2+2'];

export function TranscriptView({ items, onExample }: { items: TranscriptItem[]; onExample(text: string): void }) {
  if (items.length === 0) {
    return (
      <div className="empty-state chat-empty">
        <h3>Say hello</h3>
        <p className="muted">Ask anything. In-chat commands start with a slash. Try one of these:</p>
        <div className="examples">
          {EXAMPLES.map((example) => (
            <button key={example} type="button" className="chip" onClick={() => onExample(example)}>
              {example}
            </button>
          ))}
        </div>
      </div>
    );
  }
  return (
    <>
      {items.map((item) => {
        switch (item.kind) {
          case 'user':
            return (
              <article key={item.id} className={`message user ${item.pending ? 'pending' : ''}`} aria-label="You">
                <div className="bubble">{item.text}</div>
                {item.queued && <div className="message-meta muted small queued-note">Queued: waits for the running turn</div>}
              </article>
            );
          case 'assistant':
            return <AssistantMessage key={item.id} item={item} />;
          case 'notice':
            return (
              <div key={item.id} className={`notice ${item.tone}`} role={item.tone === 'error' ? 'alert' : undefined}>
                {item.text}
              </div>
            );
        }
      })}
    </>
  );
}

function AssistantMessage({ item }: { item: AssistantItem }) {
  const empty = item.parts.length === 0;
  return (
    <article className={`message assistant ${item.streaming ? 'streaming' : ''}`} aria-label="Agent" aria-busy={item.streaming}>
      <div className="bubble">
        {empty && item.streaming && <span className="typing" aria-label="The agent is working" />}
        {item.parts.map((part, index) =>
          part.kind === 'text' ? (
            <div key={index} className="text">
              {part.text}
            </div>
          ) : (
            <ToolChip key={part.call.id} call={part.call} />
          ),
        )}
        {item.streaming && !empty && <span className="cursor" aria-hidden="true" />}
        {item.error && <div className={`turn-error ${item.error.code === 'CANCELLED' ? 'cancelled' : ''}`}>{describeError(item.error)}</div>}
      </div>
      {item.done && (
        <div className="message-meta muted small">
          {item.done.total_tokens.toLocaleString()} tokens · {duration(item.done.duration_ms)}
          {item.done.tool_calls > 0 && ` · ${item.done.tool_calls} tool call${item.done.tool_calls === 1 ? '' : 's'}`}
          {item.done.workflow && ` · workflow ${item.done.workflow}`}
          {item.done.routing_reason && ` (${item.done.routing_reason})`}
        </div>
      )}
      {!item.done && item.routing && (
        <div className="message-meta muted small">
          {item.routing.workflow ? `workflow ${item.routing.workflow}` : 'no workflow'} ({item.routing.reason})
        </div>
      )}
    </article>
  );
}

function ToolChip({ call }: { call: ToolCallView }) {
  // A call that never ran to its end says why: cancelled (the turn was), not "failed" nor "done".
  const label = call.error === 'CANCELLED' ? 'cancelled' : { running: 'running', ok: 'done', error: 'failed', called: 'called' }[call.status];
  return (
    <details className={`tool-chip ${call.status}`}>
      <summary>
        <span className="tool-icon" aria-hidden="true">
          {call.status === 'running' ? <span className="spinner" /> : call.status === 'ok' ? '✓' : call.status === 'error' ? '✕' : '•'}
        </span>
        <code>{call.name}</code>
        <span className="muted">
          {label}
          {call.durationMs !== null && ` in ${duration(call.durationMs)}`}
        </span>
        {call.error && <span className="tool-error">{call.error}</span>}
      </summary>
      <pre>{JSON.stringify(call.input, null, 2)}</pre>
    </details>
  );
}
