import { useState, type FormEvent } from 'react';
import { Link, useNavigate } from 'react-router';
import { api, errorMessage } from '../api/client';
import type { Page, Session } from '../api/types';
import { Modal } from '../components/modal';
import { Badge, EmptyState, ErrorNote, Field, Loading, Note, PageHeader, Pager } from '../components/ui';
import { timeAgo } from '../lib/format';
import { listQuery, useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';
import { WELCOME_ADMIN_KEY } from './sign-in-page';

const PAGE_SIZE = 20;

/** The user's sessions: paged, archived on request; create, rename, archive, restore. */
export function SessionsPage() {
  const navigate = useNavigate();
  const [welcomeAdmin] = useState(() => {
    const welcome = sessionStorage.getItem(WELCOME_ADMIN_KEY) === '1';
    sessionStorage.removeItem(WELCOME_ADMIN_KEY);
    return welcome;
  });
  const [showArchived, setShowArchived] = useState(false);
  const pages = useCursorPages();
  const sessions = useLoad(
    (signal) => api.get<Page<Session>>(`/sessions?${listQuery(pages.cursor, PAGE_SIZE, showArchived ? { include_archived: 'true' } : {})}`, signal),
    [pages.cursor, showArchived],
  );
  const [creating, setCreating] = useState(false);
  const [actionError, setActionError] = useState<string | null>(null);
  const [renaming, setRenaming] = useState<Session | null>(null);

  const createSession = async () => {
    setCreating(true);
    setActionError(null);
    try {
      const session = await api.post<Session>('/sessions', {});
      void navigate(`/sessions/${session.id}`);
    } catch (error) {
      setActionError(errorMessage(error));
      setCreating(false);
    }
  };

  const act = async (work: () => Promise<unknown>) => {
    setActionError(null);
    try {
      await work();
      sessions.reload();
    } catch (error) {
      setActionError(errorMessage(error));
    }
  };

  const items = sessions.data?.items ?? [];
  return (
    <>
      <PageHeader
        title="Sessions"
        description="Each session is one conversation with the agent, with its own history, tools and memory."
        actions={
          <>
            <label className="switch">
              <input
                type="checkbox"
                checked={showArchived}
                onChange={(event) => {
                  setShowArchived(event.target.checked);
                  pages.reset();
                }}
              />
              Show archived
            </label>
            <button type="button" className="btn primary" onClick={() => void createSession()} disabled={creating}>
              New session
            </button>
          </>
        }
      />
      {welcomeAdmin && (
        <Note tone="success">
          Welcome! Yours is the first account on this hub, so you are its administrator. The Admin page manages users, channels and logs.
        </Note>
      )}
      <ErrorNote>{actionError}</ErrorNote>
      {sessions.error ? (
        <ErrorNote onRetry={sessions.reload}>{sessions.error}</ErrorNote>
      ) : sessions.loading && !sessions.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState
          title={showArchived ? 'Nothing here, archived or not' : 'No sessions yet'}
          action={
            <button type="button" className="btn primary" onClick={() => void createSession()} disabled={creating}>
              Start your first session
            </button>
          }
        >
          Start a session and say hello. Try <code>/help</code> or <code>/info</code> to see what the agent can do.
        </EmptyState>
      ) : (
        <div className="card flush">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Channel</th>
                <th scope="col">Tokens</th>
                <th scope="col">Last active</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((session) => (
                <tr key={session.id} className={session.archived_at ? 'dimmed' : undefined}>
                  <td>
                    {session.archived_at ? <span>{session.name}</span> : <Link to={`/sessions/${session.id}`}>{session.name}</Link>}
                    {session.archived_at && <Badge>archived</Badge>}
                  </td>
                  <td>
                    <Badge tone={session.channel === 'web' ? 'accent' : 'neutral'}>{session.channel}</Badge>
                  </td>
                  <td className="numeric">{session.token_counts.total_tokens.toLocaleString()}</td>
                  <td title={session.updated_at}>{timeAgo(session.updated_at)}</td>
                  <td className="row-actions">
                    {session.archived_at ? (
                      <button
                        type="button"
                        className="btn small"
                        onClick={() => void act(() => api.post(`/sessions/${session.id}/restore`))}
                        aria-label={`Restore ${session.name}`}
                      >
                        Restore
                      </button>
                    ) : (
                      <>
                        <button type="button" className="btn small ghost" onClick={() => setRenaming(session)} aria-label={`Rename ${session.name}`}>
                          Rename
                        </button>
                        <button
                          type="button"
                          className="btn small ghost"
                          onClick={() => void act(() => api.delete(`/sessions/${session.id}`))}
                          aria-label={`Archive ${session.name}`}
                        >
                          Archive
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {sessions.data && (
        <Pager
          label="Sessions"
          page={pages.page}
          total={sessions.data.total}
          hasMore={sessions.data.has_more}
          onPrevious={pages.previous}
          onNext={() => pages.next(sessions.data!.next_cursor)}
        />
      )}
      {renaming && (
        <RenameDialog
          session={renaming}
          onClose={(changed) => {
            setRenaming(null);
            if (changed) sessions.reload();
          }}
        />
      )}
    </>
  );
}

function RenameDialog({ session, onClose }: { session: Session; onClose: (changed: boolean) => void }) {
  const [name, setName] = useState(session.name);
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    try {
      await api.patch(`/sessions/${session.id}`, { name: name.trim() });
      onClose(true);
    } catch (reason) {
      setError(errorMessage(reason));
    }
  };
  return (
    <Modal title="Rename session" onDismiss={() => onClose(false)}>
      <form onSubmit={submit}>
        <Field label="Session name" error={error}>
          {(props) => <input {...props} value={name} onChange={(event) => setName(event.target.value)} required maxLength={200} autoFocus />}
        </Field>
        <div className="dialog-actions">
          <button type="button" className="btn" onClick={() => onClose(false)}>
            Close
          </button>
          <button type="submit" className="btn primary">
            Save name
          </button>
        </div>
      </form>
    </Modal>
  );
}
