import { useState } from 'react';
import { api, errorMessage } from '../api/client';
import type { BindingChannel, Workflow } from '../api/types';
import { ErrorNote, Loading } from '../components/ui';
import { useLoad } from '../lib/use-load';

/** Which workflows each channel routes to (GET/PUT /assistant/binding-channels). */
export function ChannelBindings({ workflows, canEdit, onChanged }: { workflows: Workflow[]; canEdit: boolean; onChanged(): void }) {
  const bindings = useLoad((signal) => api.get<BindingChannel[]>('/assistant/binding-channels', signal), [workflows]);
  const [error, setError] = useState<string | null>(null);
  // The hub lists every channel it has (and every narrower binding in use), bound or not.
  const channels = [...new Set((bindings.data ?? []).map((entry) => entry.channel))].sort();

  const toggle = async (channel: string, workflow: string, bound: boolean) => {
    const current = bindings.data?.find((entry) => entry.channel === channel)?.workflows ?? [];
    const next = bound ? [...current, workflow] : current.filter((name) => name !== workflow);
    setError(null);
    // Shown at once; a refusal reloads the grid.
    bindings.set((current) => [...(current ?? []).filter((entry) => entry.channel !== channel), { channel, workflows: next }]);
    try {
      await api.put(`/assistant/binding-channels/${encodeURIComponent(channel)}`, { workflows: next });
      onChanged();
    } catch (reason) {
      setError(errorMessage(reason));
      bindings.reload();
    }
  };

  return (
    <section className="card" aria-labelledby="bindings-title">
      <h2 id="bindings-title">Channel bindings</h2>
      <p className="muted small">
        A message on a channel is scored only against the workflows bound to it. {canEdit ? '' : 'Only administrators can change bindings.'}
      </p>
      <ErrorNote>{error}</ErrorNote>
      {bindings.error && <ErrorNote onRetry={bindings.reload}>{bindings.error}</ErrorNote>}
      {!bindings.data && !bindings.error ? (
        <Loading />
      ) : workflows.length === 0 ? (
        <p className="muted">Create a workflow to bind it to channels.</p>
      ) : (
        <table className="table compact">
          <thead>
            <tr>
              <th scope="col">Channel</th>
              {workflows.map((workflow) => (
                <th key={workflow.id} scope="col">
                  {workflow.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {channels.map((channel) => {
              const bound = new Set(bindings.data?.find((entry) => entry.channel === channel)?.workflows ?? []);
              return (
                <tr key={channel}>
                  <th scope="row">
                    <code>{channel}</code>
                  </th>
                  {workflows.map((workflow) => (
                    <td key={workflow.id} className="center">
                      <input
                        type="checkbox"
                        aria-label={`Bind ${workflow.name} to ${channel}`}
                        checked={bound.has(workflow.name)}
                        disabled={!canEdit}
                        onChange={(event) => void toggle(channel, workflow.name, event.target.checked)}
                      />
                    </td>
                  ))}
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}
