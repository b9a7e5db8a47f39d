import { useState } from 'react';
import { api, errorMessage } from '../api/client';

interface ConnectionCheck {
  ok: boolean;
  detail: string;
  variable: string | null;
}

/** "Test connection" for one channel: asks its platform (POST /admin/channels/{name}/test) and says what to fix. */
export function ChannelTest({ name }: { name: string }) {
  const [result, setResult] = useState<ConnectionCheck | null>(null);
  const [busy, setBusy] = useState(false);
  const test = async () => {
    setBusy(true);
    try {
      setResult(await api.post<ConnectionCheck>(`/admin/channels/${encodeURIComponent(name)}/test`, {}));
    } catch (error) {
      setResult({ ok: false, detail: errorMessage(error), variable: null });
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="channel-test">
      <button type="button" className="btn small" onClick={() => void test()} disabled={busy} aria-label={`Test the ${name} connection`}>
        {busy ? 'Testing…' : 'Test connection'}
      </button>
      {result && (
        <div className={`small ${result.ok ? 'success-text' : 'field-error'}`} role="status">
          {result.ok ? '✓ ' : '✗ '}
          {result.detail}
          {result.variable && (
            <>
              {' '}
              Fix <code>{result.variable}</code> in the hub’s environment, then restart it.
            </>
          )}
        </div>
      )}
    </div>
  );
}
