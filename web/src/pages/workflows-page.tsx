import { Link } from 'react-router';
import { api } from '../api/client';
import type { Page, Workflow } from '../api/types';
import { useAuth } from '../auth/auth-context';
import { Badge, EmptyState, ErrorNote, Loading, PageHeader, Pager } from '../components/ui';
import { timeAgo } from '../lib/format';
import { listQuery, useCursorPages } from '../lib/use-cursor-pages';
import { useLoad } from '../lib/use-load';
import { ChannelBindings } from '../workflows/channel-bindings';
import { RoutingTestBox } from '../workflows/routing-test-box';

/** Workflows: the list, channel bindings, and the routing test box. */
export function WorkflowsPage() {
  const { user } = useAuth();
  const isAdmin = user?.role === 'admin';
  const pages = useCursorPages();
  const workflows = useLoad((signal) => api.get<Page<Workflow>>(`/assistant/workflows?${listQuery(pages.cursor, 50)}`, signal), [pages.cursor]);
  const items = workflows.data?.items ?? [];

  return (
    <>
      <PageHeader
        title="Workflows"
        description="A workflow is a specialised assistant: its system prompt, pinned tools, knowledge and the triggers that pick it for a message."
        actions={
          isAdmin && (
            <Link to="/workflows/new" className="btn primary">
              New workflow
            </Link>
          )
        }
      />
      {workflows.error ? (
        <ErrorNote onRetry={workflows.reload}>{workflows.error}</ErrorNote>
      ) : workflows.loading && !workflows.data ? (
        <Loading />
      ) : items.length === 0 ? (
        <EmptyState
          title="No workflows yet"
          action={
            isAdmin && (
              <Link to="/workflows/new" className="btn primary">
                Write your first workflow
              </Link>
            )
          }
        >
          Without workflows every message gets the default system prompt and tools.{' '}
          {isAdmin ? 'Create one here, or sync workflows/*.yaml with the CLI (switchboard workflows sync).' : 'Ask an administrator to add one.'}
        </EmptyState>
      ) : (
        <div className="card flush">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Channels</th>
                <th scope="col">Triggers</th>
                <th scope="col">Tools</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {items.map((workflow) => (
                <tr key={workflow.id}>
                  <td>
                    <Link to={`/workflows/${workflow.name}`}>{workflow.name}</Link>
                    {workflow.description && <div className="muted small">{workflow.description}</div>}
                  </td>
                  <td>
                    {workflow.binding_channels.length === 0 ? (
                      <span className="muted">none</span>
                    ) : (
                      workflow.binding_channels.map((channel) => <Badge key={channel}>{channel}</Badge>)
                    )}
                  </td>
                  <td className="small">{triggerSummary(workflow)}</td>
                  <td className="small">{workflow.tool_list || <span className="muted">default</span>}</td>
                  <td title={workflow.updated_at}>{timeAgo(workflow.updated_at)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {workflows.data && (
        <Pager
          label="Workflows"
          page={pages.page}
          total={workflows.data.total}
          hasMore={workflows.data.has_more}
          onPrevious={pages.previous}
          onNext={() => pages.next(workflows.data!.next_cursor)}
        />
      )}
      <div className="grid two">
        <RoutingTestBox />
        <ChannelBindings workflows={items} canEdit={isAdmin} onChanged={workflows.reload} />
      </div>
    </>
  );
}

function triggerSummary(workflow: Workflow): string {
  const { keywords, regex, contact_tags } = workflow.triggers;
  const parts = [
    keywords.length > 0 && `${keywords.length} keyword${keywords.length === 1 ? '' : 's'}`,
    regex.length > 0 && `${regex.length} regex`,
    contact_tags.length > 0 && `${contact_tags.length} tag${contact_tags.length === 1 ? '' : 's'}`,
  ].filter(Boolean);
  return parts.length > 0 ? parts.join(', ') : 'none';
}
