import { Link } from 'react-router';
import { EmptyState } from '../components/ui';

export function NotFoundPage() {
  return (
    <EmptyState
      title="No such page"
      action={
        <Link className="btn primary" to="/sessions">
          Go to your sessions
        </Link>
      }
    >
      The address may be mistyped, or the thing it pointed to was deleted.
    </EmptyState>
  );
}
