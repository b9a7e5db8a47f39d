import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api/client';
import type { BindingChannel, RoutingTestResult } from '../api/types';
import { Badge, ErrorNote, Field } from '../components/ui';
import { useLoad } from '../lib/use-load';

const REASONS: Record<RoutingTestResult['reason'], string> = {
  metadata: 'chosen by metadata.workflow',
  contact: 'the contact’s bound workflow',
  trigger: 'best trigger score',
  session: 'the session’s current workflow',
  channel_default: 'no match: the channel’s default workflow',
  default: 'no match: default prompt and tools',
};

/** Type a message and a channel; see which workflow would answer and why (POST /assistant/routing/test). */
export function RoutingTestBox() {
  const [text, setText] = useState('');
  const [channel, setChannel] = useState('web');
  const [tags, setTags] = useState('');
  const [result, setResult] = useState<RoutingTestResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  // The hub's channels (and the narrower bindings in use), as suggestions.
  const channels = useLoad((signal) => api.get<BindingChannel[]>('/assistant/binding-channels', signal), []);

  const run = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const contactTags = tags
        .split(',')
        .map((tag) => tag.trim())
        .filter(Boolean);
      setResult(
        await api.post<RoutingTestResult>('/assistant/routing/test', {
          text,
          channel: channel.trim(),
          ...(contactTags.length > 0 ? { contact_tags: contactTags } : {}),
        }),
      );
    } catch (reason) {
      setResult(null);
      setError(errorMessage(reason));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="routing-test-title">
      <h2 id="routing-test-title">Routing test</h2>
      <p className="muted small">Which workflow would answer this message? Nothing is sent to the agent.</p>
      <form onSubmit={run} className="stack">
        <Field label="Test message">
          {(props) => (
            <textarea
              {...props}
              rows={2}
              value={text}
              onChange={(event) => setText(event.target.value)}
              required
              placeholder="e.g. I need a refund for invoice INV-20931"
            />
          )}
        </Field>
        <div className="row">
          <Field label="Channel" hint="e.g. web, slack, slack:<channel id>, telegram:<chat id>">
            {(props) => <input {...props} value={channel} onChange={(event) => setChannel(event.target.value)} list="channel-options" required />}
          </Field>
          <Field label="Contact tags" hint="Comma-separated, optional">
            {(props) => <input {...props} value={tags} onChange={(event) => setTags(event.target.value)} />}
          </Field>
        </div>
        <datalist id="channel-options">
          {(channels.data ?? []).map((entry) => (
            <option key={entry.channel} value={entry.channel} />
          ))}
        </datalist>
        <div>
          <button type="submit" className="btn primary" disabled={busy || !text.trim()}>
            Test routing
          </button>
        </div>
      </form>
      <ErrorNote>{error}</ErrorNote>
      {result && (
        <div className="routing-result" aria-live="polite" aria-label="Routing result">
          <p className="verdict">
            {result.workflow ? (
              <>
                <strong>{result.workflow}</strong> answers <Badge tone="accent">{REASONS[result.reason]}</Badge>
              </>
            ) : (
              <>
                <strong>Default</strong> answers <Badge>{REASONS[result.reason]}</Badge>
              </>
            )}
          </p>
          <p className="rule">{result.rule}</p>
          {result.workflows.length > 0 && (
            <table className="table compact">
              <caption className="sr-only">Trigger scores</caption>
              <thead>
                <tr>
                  <th scope="col">Workflow</th>
                  <th scope="col">Score</th>
                  <th scope="col">Matched</th>
                </tr>
              </thead>
              <tbody>
                {result.workflows.map((entry) => (
                  <tr key={entry.name} className={entry.name === result.workflow ? 'winner' : !entry.bound ? 'dimmed' : undefined}>
                    <td>
                      {entry.name}
                      {!entry.bound && <span className="muted small"> (not bound to {result.channel})</span>}
                    </td>
                    <td className="numeric">
                      {entry.score} <span className="muted small">/ min {entry.min_score}</span>
                    </td>
                    <td className="small">{matchedSummary(entry.matched) || <span className="muted">nothing</span>}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </div>
      )}
    </section>
  );
}

function matchedSummary(matched: RoutingTestResult['workflows'][number]['matched']): string {
  return [
    ...matched.keywords.map((keyword) => `“${keyword}” +1`),
    ...matched.regex.map((pattern) => `/${pattern}/ +2`),
    ...matched.contact_tags.map((tag) => `#${tag} +1`),
  ].join(', ');
}
