import { useEffect, useState } from 'react';
import { ApiError, errorMessage } from '../api/client';
import type { WorkflowTestRun } from '../api/types';
import { Badge, ErrorNote, Field } from '../components/ui';

/** What the panel sends: the draft, the stored workflow it stands in for, the cases as YAML. */
export interface WorkflowTestRequest {
  workflow: Record<string, unknown>;
  replaces: string | null;
  cases: string;
}

/** Where the cases of a workflow are kept between visits: this browser (the repository's files are the record). */
export const casesStorageKey = (name: string) => `switchboard.workflow-tests.${name}`;

export const casesTemplate = (name: string) =>
  `# Cases for ${name}, as in workflows/tests/${name}.yaml (see "Testing workflows" in the docs).
- name: a message that should reach ${name}
  message: "…"
  expect:
    workflow: ${name}
`;

/**
 * The workflow editor's Tests panel: runs the cases of the workflow being edited — against the
 * draft in the editor, unsaved — and shows pass or fail per case with the routing decision.
 */
export function WorkflowTestsPanel({
  name,
  draft,
  replaces,
  run,
}: {
  name: string;
  /** The editor's YAML as a workflow, or null while it does not parse. */
  draft: Record<string, unknown> | null;
  replaces: string | null;
  run(request: WorkflowTestRequest): Promise<WorkflowTestRun>;
}) {
  const [cases, setCases] = useState(() => readStored(name) ?? casesTemplate(name));
  const [result, setResult] = useState<WorkflowTestRun | null>(null);
  const [problems, setProblems] = useState<string[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => writeStored(name, cases), [name, cases]);

  const start = async () => {
    if (!draft) return;
    setBusy(true);
    setError(null);
    setProblems([]);
    try {
      setResult(await run({ workflow: draft, replaces, cases }));
    } catch (reason) {
      setResult(null);
      const listed = reason instanceof ApiError ? (reason.fields.cases ?? []).map((issue) => issue.message) : [];
      setProblems(listed);
      setError(errorMessage(reason));
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="card" aria-labelledby="workflow-tests-title">
      <h2 id="workflow-tests-title">Tests</h2>
      <p className="muted small">
        Cases in the format of <code>workflows/tests/*.yaml</code>, run against the workflow as edited here (unsaved changes included), in a sandbox with the
        scripted model. Nothing is saved or sent to a session; the cases are kept in this browser.
      </p>
      <div className="stack">
        <Field label="Test cases (YAML)">
          {(props) => <textarea {...props} rows={8} spellCheck={false} className="mono" value={cases} onChange={(event) => setCases(event.target.value)} />}
        </Field>
        <div>
          <button type="button" className="btn" onClick={() => void start()} disabled={busy || !draft || !cases.trim()}>
            {busy ? 'Running…' : 'Run tests'}
          </button>
          {!draft && <span className="muted small"> Fix the workflow’s YAML first.</span>}
        </div>
        <ErrorNote>{error}</ErrorNote>
        {problems.length > 0 && (
          <ul className="issues" aria-label="Problems in the cases">
            {problems.map((problem) => (
              <li key={problem}>{problem}</li>
            ))}
          </ul>
        )}
        {result && <Results result={result} />}
      </div>
    </section>
  );
}

function Results({ result }: { result: WorkflowTestRun }) {
  return (
    <div aria-live="polite" aria-label="Test results">
      <p>
        <Badge tone={result.failed === 0 ? 'success' : 'danger'}>{result.failed === 0 ? 'All passed' : `${result.failed} failed`}</Badge>{' '}
        <span className="muted small">
          {result.passed} of {result.cases.length} passed
        </span>
      </p>
      <table className="table compact">
        <caption className="sr-only">Test cases</caption>
        <thead>
          <tr>
            <th scope="col">Case</th>
            <th scope="col">Result</th>
            <th scope="col">Routing</th>
          </tr>
        </thead>
        <tbody>
          {result.cases.map((entry) => (
            <tr key={entry.name}>
              <td>
                {entry.name}
                {entry.failures.map((failure) => (
                  <div key={failure} className="small danger-text">
                    {failure}
                  </div>
                ))}
              </td>
              <td>{entry.passed ? <Badge tone="success">pass</Badge> : <Badge tone="danger">fail</Badge>}</td>
              <td className="small">
                {entry.routing ? (
                  <>
                    <strong>{entry.routing.workflow ?? 'default'}</strong> by {entry.routing.reason}
                    {entry.routing.rule && <div className="muted">{entry.routing.rule}</div>}
                  </>
                ) : (
                  <span className="muted">not routed</span>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function readStored(name: string): string | null {
  try {
    return window.localStorage.getItem(casesStorageKey(name));
  } catch {
    return null;
  }
}

function writeStored(name: string, cases: string): void {
  try {
    window.localStorage.setItem(casesStorageKey(name), cases);
  } catch {
    // Storage full or off (private mode): the cases live as long as the page.
  }
}
