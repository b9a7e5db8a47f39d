import { Note } from '../components/ui';
import type { WorkflowWarning } from '../api/types';

/** What the hub said, at save, will not work as likely meant (the workflow is saved all the same). */
export function WorkflowWarnings({ warnings }: { warnings: readonly WorkflowWarning[] }) {
  if (warnings.length === 0) return null;
  return (
    <Note tone="warning">
      <strong>Saved, but:</strong>
      <ul className="warning-list" aria-label="Warnings">
        {warnings.map((warning) => (
          <li key={`${warning.workflow}-${warning.code}-${warning.message}`}>{warning.message}</li>
        ))}
      </ul>
    </Note>
  );
}
