import { useState } from 'react';
import { api, errorMessage } from '../api/client';
import type { McpServer, McpTool } from '../api/types';
import { Badge, EmptyState, ErrorNote, Loading } from '../components/ui';
import { useLoad } from '../lib/use-load';

const STATE_TONE: Record<McpServer['state'], 'neutral' | 'success' | 'warning' | 'danger'> = {
  starting: 'warning',
  ready: 'success',
  failed: 'danger',
  stopped: 'neutral',
};

/**
 * The hub's MCP servers (GET /api/v1/mcp/servers): state, restarts, last error and every tool with
 * its model name and confirmation rule; a restart, and the approval of a tool whose definition
 * changed (withheld from the model until then). Servers are declared in config.yaml only.
 */
export function McpServers() {
  const servers = useLoad((signal) => api.get<McpServer[]>('/mcp/servers', signal), []);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState<string | null>(null);

  const act = async (key: string, path: string) => {
    setError(null);
    setBusy(key);
    try {
      await api.post(path, {});
      servers.reload();
    } catch (reason) {
      setError(errorMessage(reason));
    } finally {
      setBusy(null);
    }
  };

  if (servers.error) return <ErrorNote onRetry={servers.reload}>{servers.error}</ErrorNote>;
  if (!servers.data) return <Loading />;
  if (servers.data.length === 0) {
    return <EmptyState title="No MCP servers">Declare servers under mcp.servers in config.yaml; workflows then pin their tools as server.tool.</EmptyState>;
  }
  return (
    <>
      <ErrorNote>{error}</ErrorNote>
      {servers.data.map((server) => (
        <section key={server.name} className="card" aria-label={`MCP server ${server.name}`}>
          <div className="row">
            <h2>
              {server.name} <span className="muted small">{server.transport === 'stdio' ? 'stdio' : 'Streamable HTTP'}</span>
            </h2>
            <Badge tone={STATE_TONE[server.state]}>{server.state}</Badge>
            <span className="muted small">
              restarts: {server.restarts} · confirm: {server.confirm}
            </span>
            <button
              type="button"
              className="btn"
              disabled={busy !== null}
              onClick={() => void act(server.name, `/mcp/servers/${encodeURIComponent(server.name)}/restart`)}
            >
              {busy === server.name ? 'Restarting…' : 'Restart'}
            </button>
          </div>
          {server.last_error && <div className="field-error small">{server.last_error}</div>}
          <ToolTable
            server={server}
            busy={busy}
            onApprove={(tool) =>
              void act(`${server.name}.${tool.name}`, `/mcp/servers/${encodeURIComponent(server.name)}/tools/${encodeURIComponent(tool.name)}/approve`)
            }
          />
        </section>
      ))}
    </>
  );
}

function ToolTable({ server, busy, onApprove }: { server: McpServer; busy: string | null; onApprove: (tool: McpTool) => void }) {
  if (server.tools.length === 0) return <p className="muted small">No tools listed{server.state === 'ready' ? ' (check the tools filter)' : ' yet'}.</p>;
  return (
    <table className="table">
      <thead>
        <tr>
          <th scope="col">Tool</th>
          <th scope="col">Model name</th>
          <th scope="col">Confirmation</th>
          <th scope="col">Definition</th>
        </tr>
      </thead>
      <tbody>
        {server.tools.map((tool) => (
          <tr key={tool.name}>
            <td title={tool.description}>{tool.name}</td>
            <td>
              <code>{tool.model_name}</code>
            </td>
            <td>{tool.requires_confirmation ? 'asks' : 'runs without asking'}</td>
            <td>
              {tool.changed ? (
                <>
                  <Badge tone="warning">changed</Badge>{' '}
                  <button type="button" className="btn" disabled={busy !== null} onClick={() => onApprove(tool)}>
                    Approve
                  </button>
                </>
              ) : (
                <Badge tone="success">pinned</Badge>
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
