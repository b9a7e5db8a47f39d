import { useEffect, useMemo, useState } from 'react';
import { Link, useLocation, useNavigate, useParams } from 'react-router';
import { api, ApiError, errorMessage } from '../api/client';
import type { Workflow, WorkflowWarning } from '../api/types';
import { useAuth } from '../auth/auth-context';
import { Modal } from '../components/modal';
import { ErrorNote, Loading, Note, PageHeader } from '../components/ui';
import { YamlEditor } from '../components/yaml-editor';
import { useLoad } from '../lib/use-load';
import { WorkflowTestsPanel } from '../workflows/workflow-tests-panel';
import type { WorkflowTestRun } from '../api/types';
import { WorkflowWarnings } from '../workflows/workflow-warnings';
import { WorkflowEvents } from '../workflows/workflow-events';
import { NEW_WORKFLOW_YAML, issuesAtLines, parseWorkflowYaml, workflowToYaml, type YamlIssue } from '../workflows/workflow-yaml';

/** View and edit one workflow as YAML (or write a new one); problems are shown at their lines. */
export function WorkflowEditorPage() {
  const { name } = useParams();
  const isNew = name === undefined;
  const workflow = useLoad((signal) => (isNew ? Promise.resolve(null) : api.get<Workflow>(`/assistant/workflows/${encodeURIComponent(name)}`, signal)), [name]);
  if (workflow.error) {
    return (
      <>
        <PageHeader title={name ?? 'Workflow'} />
        <ErrorNote onRetry={workflow.reload}>{workflow.error}</ErrorNote>
        <Link to="/workflows">Back to workflows</Link>
      </>
    );
  }
  if (workflow.loading && workflow.data === undefined) return <Loading />;
  // Right after Create, the previous page's data (null: a new workflow) is still there while this one
  // loads: the editor waits for the workflow it is named after, so it never starts from the template.
  if (!isNew && workflow.data?.name !== name) return <Loading />;
  return <Editor key={name ?? 'new'} original={workflow.data ?? null} onSaved={workflow.set} />;
}

function Editor({ original, onSaved }: { original: Workflow | null; onSaved(workflow: Workflow): void }) {
  const { user } = useAuth();
  const canEdit = user?.role === 'admin';
  const navigate = useNavigate();
  const initial = useMemo(() => (original ? workflowToYaml(original) : NEW_WORKFLOW_YAML), [original]);
  const [text, setText] = useState(initial);
  const [serverIssues, setServerIssues] = useState<YamlIssue[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  // A new workflow's page is opened afresh after Create: its warnings come along in the navigation state.
  const location = useLocation();
  const [warnings, setWarnings] = useState<WorkflowWarning[]>(() => (location.state as { warnings?: WorkflowWarning[] } | null)?.warnings ?? []);
  const [busy, setBusy] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);
  const dirty = text !== initial;

  // Syntax is checked as you type; field rules are the hub's, shown after Save.
  const parsed = useMemo(() => parseWorkflowYaml(text), [text]);
  const issues = parsed.ok ? serverIssues : parsed.issues;

  useEffect(() => {
    if (!dirty) return;
    const warn = (event: BeforeUnloadEvent) => event.preventDefault();
    window.addEventListener('beforeunload', warn);
    return () => window.removeEventListener('beforeunload', warn);
  }, [dirty]);

  const save = async () => {
    if (!parsed.ok) return;
    setBusy(true);
    setError(null);
    setSaved(null);
    setWarnings([]);
    setServerIssues([]);
    try {
      const result = original
        ? await api.put<Workflow>(`/assistant/workflows/${encodeURIComponent(original.name)}`, parsed.value)
        : await api.post<Workflow>('/assistant/workflows', parsed.value);
      setSaved(`Saved ${result.name}.`);
      setWarnings(result.warnings ?? []);
      if (original && result.name === original.name) {
        onSaved(result);
        setText(workflowToYaml(result));
      } else {
        void navigate(`/workflows/${result.name}`, { replace: true, state: { warnings: result.warnings ?? [] } });
      }
    } catch (reason) {
      if (reason instanceof ApiError && reason.status === 422 && Object.keys(reason.fields).length > 0) {
        const found = issuesAtLines(text, reason.fields);
        setServerIssues(found);
        setError(`${reason.message} Fix the ${found.length === 1 ? 'problem' : `${found.length} problems`} listed under the editor.`);
      } else {
        setError(errorMessage(reason));
      }
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    if (!original) return;
    try {
      await api.delete(`/assistant/workflows/${encodeURIComponent(original.name)}`);
      void navigate('/workflows', { replace: true });
    } catch (reason) {
      setConfirmDelete(false);
      setError(errorMessage(reason));
    }
  };

  return (
    <>
      <PageHeader
        title={original ? original.name : 'New workflow'}
        description={
          <>
            <Link to="/workflows">← Workflows</Link> · The same YAML as a <code>workflows/*.yaml</code> file.
          </>
        }
        actions={
          canEdit && (
            <>
              {original && (
                <button type="button" className="btn danger ghost" onClick={() => setConfirmDelete(true)}>
                  Delete
                </button>
              )}
              <button type="button" className="btn" onClick={() => setText(initial)} disabled={!dirty || busy}>
                Revert
              </button>
              <button type="button" className="btn primary" onClick={() => void save()} disabled={busy || !parsed.ok || (!dirty && original !== null)}>
                {original ? 'Save changes' : 'Create workflow'}
              </button>
            </>
          )
        }
      />
      {!canEdit && <Note>Read only: only administrators can change workflows.</Note>}
      {saved && !dirty && <Note tone="success">{saved}</Note>}
      {!dirty && <WorkflowWarnings warnings={warnings} />}
      <ErrorNote>{error}</ErrorNote>
      <YamlEditor
        value={text}
        onChange={(value) => {
          setText(value);
          setServerIssues([]);
          setSaved(null);
        }}
        issues={issues}
        readOnly={!canEdit}
      />
      {canEdit && (
        <WorkflowTestsPanel
          name={original?.name ?? 'new-workflow'}
          draft={parsed.ok ? (parsed.value as unknown as Record<string, unknown>) : null}
          replaces={original?.name ?? null}
          run={(request) => api.post<WorkflowTestRun>('/assistant/workflows/tests', request)}
        />
      )}
      {original && canEdit && <WorkflowEvents workflow={original} />}
      <details className="card help">
        <summary>Fields</summary>
        <dl>
          <dt>
            <code>name</code>
          </dt>
          <dd>
            Lowercase letters, digits, <code>_</code> and <code>-</code>; unique.
          </dd>
          <dt>
            <code>tool_list</code>
          </dt>
          <dd>
            Comma-separated tool names, pinned: <code>/tools load</code> cannot add others.
          </dd>
          <dt>
            <code>knowledge_base_ids</code>
          </dt>
          <dd>Knowledge collections (ids or names) searched on every turn.</dd>
          <dt>
            <code>binding_channels</code>
          </dt>
          <dd>
            <code>web</code>, <code>slack</code>, <code>telegram</code>, or <code>slack:&lt;channel id&gt;</code>, <code>telegram:&lt;chat id&gt;</code>.
          </dd>
          <dt>
            <code>triggers</code>
          </dt>
          <dd>
            <code>keywords</code> (+1 each), <code>regex</code> (+2 each), <code>contact_tags</code> (+1 each), <code>min_score</code> (default 1).
          </dd>
          <dt>
            <code>system_prompt</code>
          </dt>
          <dd>Replaces the default system prompt; must fit the model’s context.</dd>
        </dl>
      </details>
      {confirmDelete && original && (
        <Modal title={`Delete ${original.name}?`} onDismiss={() => setConfirmDelete(false)}>
          <p>Sessions and contacts that use it fall back to routing. This cannot be undone.</p>
          <div className="dialog-actions">
            <button type="button" className="btn" onClick={() => setConfirmDelete(false)} autoFocus>
              Keep it
            </button>
            <button type="button" className="btn danger" onClick={() => void remove()}>
              Delete workflow
            </button>
          </div>
        </Modal>
      )}
    </>
  );
}
