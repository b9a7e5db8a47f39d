import { useEffect, useId, useRef } from 'react';
import type { ConfirmAction } from '../../../src/protocol/confirm-actions';
import type { FramePayload } from '../../../src/protocol/frames';
import { Modal } from './modal';

type ConfirmRequest = FramePayload<'tool_confirm_request'>;

/** The six answers of the protocol as buttons: label, what it covers, and the CLI's key. */
const CONFIRM_BUTTONS: readonly { action: ConfirmAction; key: string; label: string; hint: string }[] = [
  { action: 'allow', key: 'y', label: 'Allow', hint: 'this call, once' },
  { action: 'deny', key: 'n', label: 'Deny', hint: 'this call; the agent may try something else' },
  { action: 'allow_all', key: 'a', label: 'Allow all', hint: 'this tool for the rest of the session' },
  { action: 'disable', key: 'd', label: 'Disable', hint: 'this tool for the rest of the session' },
  { action: 'forbid_all', key: 'f', label: 'Forbid all', hint: 'every tool request in this turn' },
  { action: 'cancel', key: 'c', label: 'Cancel', hint: 'the whole turn' },
];

/**
 * The tool confirmation (spec, `tool_confirm_request`): opens at once with the tool, its parameters
 * and the hub's message; six answers as buttons, and the CLI's keys (y, n, a, d, f, c).
 */
export function ConfirmDialog({ request, onAnswer }: { request: ConfirmRequest; onAnswer: (action: ConfirmAction) => void }) {
  const messageId = useId();
  const answered = useRef(false);
  const answer = (action: ConfirmAction) => {
    if (answered.current) return;
    answered.current = true;
    onAnswer(action);
  };

  useEffect(() => {
    const onKey = (event: KeyboardEvent) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.repeat) return;
      const match = CONFIRM_BUTTONS.find((entry) => entry.key === event.key.toLowerCase());
      if (!match) return;
      event.preventDefault();
      answer(match.action);
    };
    window.addEventListener('keydown', onKey);
    return () => window.removeEventListener('keydown', onKey);
  }, [request.confirmation_id]);

  return (
    <Modal
      title={
        <>
          Allow <code>{request.tool}</code>?
        </>
      }
      className="confirm-dialog"
      describedBy={messageId}
    >
      <p id={messageId}>{request.message}</p>
      <h3 className="label">Parameters</h3>
      <pre className="parameters" tabIndex={0} aria-label="Parameters">
        {JSON.stringify(request.parameters, null, 2)}
      </pre>
      <div className="confirm-actions">
        {CONFIRM_BUTTONS.map((entry, index) => (
          <button
            key={entry.action}
            type="button"
            className={`btn ${entry.action === 'allow' ? 'primary' : ''} ${entry.action === 'cancel' || entry.action === 'forbid_all' ? 'danger' : ''}`}
            autoFocus={index === 0}
            aria-keyshortcuts={entry.key}
            title={`${entry.label} ${entry.hint}`}
            onClick={() => answer(entry.action)}
          >
            {entry.label} <kbd>{entry.key}</kbd>
          </button>
        ))}
      </div>
      <p className="muted small">Keys: y allow · n deny · a allow all · d disable · f forbid all · c cancel the turn</p>
    </Modal>
  );
}
