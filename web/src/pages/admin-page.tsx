import { useState, type FormEvent } from 'react';
import { Navigate, NavLink, useParams } from 'react-router';
import { api, ApiError, errorMessage } from '../api/client';
import type { ChannelStatus, Page, Role, User } from '../api/types';
import { useAuth } from '../auth/auth-context';
import { Badge, EmptyState, ErrorNote, Field, Loading, PageHeader, Pager } from '../components/ui';
import { LogViewer } from '../admin/log-viewer';
import { McpServers } from '../admin/mcp-servers';
import { dateTime, timeAgo } from '../lib/format';
import { listQuery, useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';
import { ChannelTest } from '../admin/channel-test';

const TABS = [
  { id: 'users', label: 'Users' },
  { id: 'channels', label: 'Channels' },
  { id: 'mcp', label: 'MCP servers' },
  { id: 'logs', label: 'Live logs' },
] as const;

/** Administration: users, channel status, the live log stream. Admins only. */
export function AdminPage() {
  const { user } = useAuth();
  const { tab = 'users' } = useParams();
  if (user?.role !== 'admin') {
    return <EmptyState title="Administrators only">Your account is a member account. Ask an administrator for what you need.</EmptyState>;
  }
  if (!TABS.some((entry) => entry.id === tab)) return <Navigate to="/admin/users" replace />;
  return (
    <>
      <PageHeader title="Admin" description="Users, channels, MCP servers and what the hub is doing right now." />
      <nav className="tab-links" aria-label="Admin sections">
        {TABS.map((entry) => (
          <NavLink key={entry.id} to={`/admin/${entry.id}`}>
            {entry.label}
          </NavLink>
        ))}
      </nav>
      {tab === 'users' && <Users me={user} />}
      {tab === 'channels' && <Channels />}
      {tab === 'mcp' && <McpServers />}
      {tab === 'logs' && <LogViewer />}
    </>
  );
}

function Users({ me }: { me: User }) {
  const pages = useCursorPages();
  const users = useLoad((signal) => api.get<Page<User>>(`/users?${listQuery(pages.cursor, 25)}`, signal), [pages.cursor]);
  const [error, setError] = useState<string | null>(null);

  const change = async (user: User, patch: { role?: Role; is_active?: boolean }) => {
    setError(null);
    const merge = (fields: Partial<User>) =>
      users.set((page) => page && { ...page, items: page.items.map((item) => (item.id === user.id ? { ...item, ...fields } : item)) });
    // Shown at once; the hub's answer replaces it, a refusal reloads the list.
    merge(patch);
    try {
      merge(await api.patch<User>(`/users/${user.id}`, patch));
    } catch (reason) {
      setError(errorMessage(reason));
      users.reload();
    }
  };

  return (
    <>
      <NewUser onCreated={users.reload} />
      <ErrorNote>{error}</ErrorNote>
      {users.error ? (
        <ErrorNote onRetry={users.reload}>{users.error}</ErrorNote>
      ) : !users.data ? (
        <Loading />
      ) : (
        <div className="card flush">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">User</th>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Active</th>
                <th scope="col">Joined</th>
              </tr>
            </thead>
            <tbody>
              {users.data.items.map((user) => {
                const self = user.id === me.id;
                return (
                  <tr key={user.id} className={user.is_active ? undefined : 'dimmed'}>
                    <td>
                      {user.username} {self && <Badge tone="accent">you</Badge>}
                    </td>
                    <td>{user.email}</td>
                    <td>
                      <select
                        aria-label={`Role of ${user.username}`}
                        value={user.role}
                        disabled={self}
                        title={self ? 'You cannot change your own role' : undefined}
                        onChange={(event) => void change(user, { role: event.target.value as Role })}
                      >
                        <option value="user">Member</option>
                        <option value="admin">Administrator</option>
                      </select>
                    </td>
                    <td>
                      <input
                        type="checkbox"
                        aria-label={`${user.username} is active`}
                        checked={user.is_active}
                        disabled={self}
                        title={self ? 'You cannot deactivate yourself' : undefined}
                        onChange={(event) => void change(user, { is_active: event.target.checked })}
                      />
                    </td>
                    <td title={dateTime(user.created_at)}>{timeAgo(user.created_at)}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {users.data && (
        <Pager
          label="Users"
          page={pages.page}
          total={users.data.total}
          hasMore={users.data.has_more}
          onPrevious={pages.previous}
          onNext={() => pages.next(users.data!.next_cursor)}
        />
      )}
    </>
  );
}

function NewUser({ onCreated }: { onCreated(): void }) {
  const [open, setOpen] = useState(false);
  const [form, setForm] = useState({ username: '', email: '', password: '', role: 'user' as Role });
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      await api.post('/users', form);
      setForm({ username: '', email: '', password: '', role: 'user' });
      setOpen(false);
      onCreated();
    } catch (reason) {
      setError(errorMessage(reason));
    }
  };
  if (!open) {
    return (
      <div className="toolbar">
        <button type="button" className="btn" onClick={() => setOpen(true)}>
          Add a user
        </button>
      </div>
    );
  }
  return (
    <form className="card" onSubmit={submit} aria-label="Add a user">
      <div className="row align-end">
        <Field label="New user’s username">
          {(props) => <input {...props} value={form.username} onChange={(event) => setForm({ ...form, username: event.target.value })} required />}
        </Field>
        <Field label="New user’s email">
          {(props) => <input {...props} type="email" value={form.email} onChange={(event) => setForm({ ...form, email: event.target.value })} required />}
        </Field>
        <Field label="Initial password">
          {(props) => (
            <input
              {...props}
              type="password"
              autoComplete="new-password"
              value={form.password}
              onChange={(event) => setForm({ ...form, password: event.target.value })}
              required
              minLength={8}
            />
          )}
        </Field>
        <Field label="New user’s role">
          {(props) => (
            <select {...props} value={form.role} onChange={(event) => setForm({ ...form, role: event.target.value as Role })}>
              <option value="user">Member</option>
              <option value="admin">Administrator</option>
            </select>
          )}
        </Field>
      </div>
      <ErrorNote>{error}</ErrorNote>
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={() => setOpen(false)}>
          Close
        </button>
        <button type="submit" className="btn primary">
          Create user
        </button>
      </div>
    </form>
  );
}

const STATUS_TONE: Record<ChannelStatus['status'], 'neutral' | 'success' | 'warning' | 'danger'> = {
  disabled: 'neutral',
  starting: 'warning',
  running: 'success',
  failed: 'danger',
};

function Channels() {
  const channels = useLoad(async (signal) => {
    try {
      return await api.get<ChannelStatus[]>('/admin/channels', signal);
    } catch (error) {
      if (error instanceof ApiError && error.status === 404) return null; // an older hub without the endpoint
      throw error;
    }
  }, []);
  if (channels.error) return <ErrorNote onRetry={channels.reload}>{channels.error}</ErrorNote>;
  if (channels.data === undefined) return <Loading />;
  if (channels.data === null) {
    return (
      <EmptyState title="Channel status is not available on this hub version">
        This hub does not report channel status (GET /api/v1/admin/channels). Update the hub, or check its startup log for Slack and Telegram.
      </EmptyState>
    );
  }
  return (
    <div className="card flush">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Channel</th>
            <th scope="col">Status</th>
            <th scope="col">Mode</th>
            <th scope="col">Last event</th>
            <th scope="col">Started</th>
            <th scope="col">
              <span className="sr-only">Connection</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {channels.data.map((channel) => (
            <tr key={channel.name}>
              <td className="capitalize">{channel.name}</td>
              <td>
                <Badge tone={STATUS_TONE[channel.status]}>{channel.enabled ? channel.status : 'disabled'}</Badge>
                {channel.error && <div className="field-error small">{channel.error}</div>}
              </td>
              <td>{channel.mode ?? '—'}</td>
              <td title={channel.last_event_at ?? undefined}>{channel.last_event_at ? timeAgo(channel.last_event_at) : 'none yet'}</td>
              <td>{channel.started_at ? timeAgo(channel.started_at) : '—'}</td>
              <td>
                <ChannelTest name={channel.name} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
