import { useState } from 'react';
import { api, errorMessage } from '../api/client';
import { EmptyState, ErrorNote, Loading, PageHeader } from '../components/ui';
import { timeAgo } from '../lib/format';
import { useApprovalsStream } from '../lib/use-approvals-stream';
import { useLoad } from '../lib/use-load';

const STATUS_TEXT = { live: 'Live', connecting: 'Connecting…', offline: 'Not live: reload the page' } as const;

/** An approval as `GET /api/v1/approvals` lists it (the fields this page shows). */
interface Approval {
  id: string;
  session_id: string;
  tool: string;
  message: string;
  workflow: string | null;
  requester: string;
  created_at: string;
  progress: { approvals: number; quorum: number; approvers: string; approved_by: string[]; expires_at: string };
}

/** The approvals this user may decide (approval policies of workflows), live: read again whenever one changes anywhere. */
export function ApprovalsPage() {
  const approvals = useLoad((signal) => api.get<{ items: Approval[] }>('/approvals?state=pending&limit=100', signal), []);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const { reload } = approvals;
  const stream = useApprovalsStream(reload);

  const decide = async (approval: Approval, action: 'allow' | 'deny' | 'allow_all') => {
    setBusy(approval.id);
    setError(null);
    try {
      await api.post(`/approvals/${approval.id}`, { action });
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(null);
      reload();
    }
  };

  const items = approvals.data?.items ?? [];
  return (
    <>
      <PageHeader
        title="Approvals"
        description="Tool calls waiting for your approval, across sessions (workflow approval policies). New requests and decisions show as they happen."
        actions={
          <span className={`live-status ${stream}`} role="status" data-testid="approvals-stream">
            <span className="dot" aria-hidden="true" /> {STATUS_TEXT[stream]}
          </span>
        }
      />
      <ErrorNote>{error}</ErrorNote>
      {approvals.error ? (
        <ErrorNote onRetry={reload}>{approvals.error}</ErrorNote>
      ) : !approvals.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="Nothing waits for you">When a workflow's approval policy names you (by role or username), its tool calls appear here.</EmptyState>
      ) : (
        <div className="card flush">
          <table className="table approvals-table">
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Call</th>
                <th scope="col">Approved</th>
                <th scope="col">Asked</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((approval) => (
                <tr key={approval.id}>
                  <td>
                    <code>{approval.tool}</code>
                    {approval.workflow ? <div className="dimmed">{approval.workflow}</div> : null}
                  </td>
                  <td>{approval.message}</td>
                  <td title={approval.progress.approved_by.join(', ')} data-label="Approved">
                    {approval.progress.approvals} of {approval.progress.quorum}
                  </td>
                  <td title={approval.created_at} data-label="Asked">
                    {timeAgo(approval.created_at)}
                  </td>
                  <td className="row-actions">
                    <button type="button" className="btn small primary" disabled={busy === approval.id} onClick={() => void decide(approval, 'allow')}>
                      Allow
                    </button>
                    <button type="button" className="btn small" disabled={busy === approval.id} onClick={() => void decide(approval, 'allow_all')}>
                      Allow for session
                    </button>
                    <button type="button" className="btn small danger" disabled={busy === approval.id} onClick={() => void decide(approval, 'deny')}>
                      Deny
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
