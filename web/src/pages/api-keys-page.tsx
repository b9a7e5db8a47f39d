import { useState, type FormEvent } from 'react';
import { api, errorMessage } from '../api/client';
import type { ApiKey, Page } from '../api/types';
import { Modal } from '../components/modal';
import { Badge, EmptyState, ErrorNote, Field, Loading, PageHeader, Pager } from '../components/ui';
import { dateTime, timeAgo } from '../lib/format';
import { listQuery, useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';

type NewKey = ApiKey & { key: string };

/** API keys for scripts and SDKs: create (the key is shown once), list, revoke. */
export function ApiKeysPage() {
  const pages = useCursorPages();
  const keys = useLoad((signal) => api.get<Page<ApiKey>>(`/auth/api-keys?${listQuery(pages.cursor, 20)}`, signal), [pages.cursor]);
  const [created, setCreated] = useState<NewKey | null>(null);
  const [revoking, setRevoking] = useState<ApiKey | null>(null);
  const [error, setError] = useState<string | null>(null);
  const items = keys.data?.items ?? [];

  return (
    <>
      <PageHeader
        title="API keys"
        description={
          <>
            For scripts, SDKs and the CLI: send <code>Authorization: Bearer svc_live_…</code>. A key acts as you, with your role.
          </>
        }
      />
      <CreateKey
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      <ErrorNote>{error}</ErrorNote>
      {keys.error ? (
        <ErrorNote onRetry={keys.reload}>{keys.error}</ErrorNote>
      ) : !keys.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState title="No API keys yet">Create one above for each script or machine, so you can revoke them one at a time.</EmptyState>
      ) : (
        <div className="card flush">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Label</th>
                <th scope="col">Key</th>
                <th scope="col">Created</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((key) => (
                <tr key={key.id} className={key.revoked_at ? 'dimmed' : undefined}>
                  <td>{key.label}</td>
                  <td>
                    <code>{key.key_prefix}…</code>
                  </td>
                  <td title={key.created_at}>{timeAgo(key.created_at)}</td>
                  <td>{timeAgo(key.last_used_at)}</td>
                  <td>{key.expires_at ? dateTime(key.expires_at) : 'never'}</td>
                  <td className="row-actions">
                    {key.revoked_at ? (
                      <Badge tone="danger">revoked</Badge>
                    ) : (
                      <button type="button" className="btn small danger ghost" onClick={() => setRevoking(key)} aria-label={`Revoke ${key.label}`}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {keys.data && (
        <Pager
          label="API keys"
          page={pages.page}
          total={keys.data.total}
          hasMore={keys.data.has_more}
          onPrevious={pages.previous}
          onNext={() => pages.next(keys.data!.next_cursor)}
        />
      )}
      {created && <ShowOnce apiKey={created} onClose={() => setCreated(null)} />}
      {revoking && (
        <Modal title={`Revoke “${revoking.label}”?`} onDismiss={() => setRevoking(null)}>
          <p>Scripts using this key stop working at once. This cannot be undone.</p>
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => setRevoking(null)} autoFocus>
              Keep it
            </button>
            <button
              type="button"
              className="btn danger"
              onClick={async () => {
                const key = revoking;
                setRevoking(null);
                try {
                  await api.delete(`/auth/api-keys/${key.id}`);
                  keys.reload();
                } catch (reason) {
                  setError(errorMessage(reason));
                }
              }}
            >
              Revoke key
            </button>
          </div>
        </Modal>
      )}
    </>
  );
}

function CreateKey({ onCreated }: { onCreated(key: NewKey): void }) {
  const [label, setLabel] = useState('');
  const [days, setDays] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    try {
      const key = await api.post<NewKey>('/auth/api-keys', { label: label.trim(), ...(days ? { expires_in_days: Number(days) } : {}) });
      setLabel('');
      setDays('');
      onCreated(key);
    } catch (reason) {
      setError(errorMessage(reason));
    }
  };
  return (
    <form className="card row align-end" onSubmit={submit} aria-label="Create an API key">
      <Field label="Key label" hint="What uses it, e.g. “deploy bot”">
        {(props) => <input {...props} value={label} onChange={(event) => setLabel(event.target.value)} required maxLength={100} />}
      </Field>
      <Field label="Expires in (days)" hint="Empty: never">
        {(props) => <input {...props} type="number" min={1} max={3650} value={days} onChange={(event) => setDays(event.target.value)} />}
      </Field>
      <button type="submit" className="btn primary" disabled={!label.trim()}>
        Create key
      </button>
      <ErrorNote>{error}</ErrorNote>
    </form>
  );
}

function ShowOnce({ apiKey, onClose }: { apiKey: NewKey; onClose(): void }) {
  const [copied, setCopied] = useState<'yes' | 'failed' | null>(null);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(apiKey.key);
      setCopied('yes');
    } catch {
      setCopied('failed');
    }
  };
  return (
    <Modal title="Your new API key" onDismiss={onClose}>
      <p>
        Copy it now: <strong>this is the only time it is shown.</strong> The hub keeps only a hash.
      </p>
      <div className="secret-row">
        <input className="secret" readOnly value={apiKey.key} aria-label="New API key" onFocus={(event) => event.currentTarget.select()} />
        <button type="button" className="btn primary" onClick={() => void copy()}>
          {copied === 'yes' ? 'Copied' : 'Copy'}
        </button>
      </div>
      {copied === 'failed' && <p className="field-error">The browser refused the clipboard: select the key and copy it by hand.</p>}
      <div className="dialog-actions">
        <button type="button" className="btn" onClick={onClose}>
          I have stored it
        </button>
      </div>
    </Modal>
  );
}
