import { useId, useRef } from 'react';
import type { YamlIssue } from '../workflows/workflow-yaml';

/**
 * A YAML text box with line numbers; lines with a problem are marked in the gutter and the problems
 * are listed under it, each a button that puts the cursor on its line.
 */
export function YamlEditor({
  value,
  onChange,
  issues,
  readOnly,
  label = 'Workflow YAML',
}: {
  value: string;
  onChange(value: string): void;
  issues: YamlIssue[];
  readOnly?: boolean;
  label?: string;
}) {
  const id = useId();
  const area = useRef<HTMLTextAreaElement>(null);
  const gutter = useRef<HTMLDivElement>(null);
  const lineCount = value.split('\n').length;
  const badLines = new Set(issues.map((issue) => issue.line).filter((line): line is number => line !== null));

  const goToLine = (line: number) => {
    const textarea = area.current;
    if (!textarea) return;
    const lines = value.split('\n');
    const start = lines.slice(0, line - 1).reduce((sum, text) => sum + text.length + 1, 0);
    textarea.focus();
    textarea.setSelectionRange(start, start + (lines[line - 1]?.length ?? 0));
    const lineHeight = parseFloat(getComputedStyle(textarea).lineHeight) || 20;
    textarea.scrollTop = Math.max(0, (line - 3) * lineHeight);
  };

  return (
    <div className="yaml-editor">
      <label htmlFor={id} className="sr-only">
        {label}
      </label>
      <div className="editor-frame">
        <div className="gutter" ref={gutter} aria-hidden="true">
          {Array.from({ length: lineCount }, (_, index) => (
            <div key={index} className={badLines.has(index + 1) ? 'bad' : undefined}>
              {index + 1}
            </div>
          ))}
        </div>
        <textarea
          id={id}
          ref={area}
          value={value}
          readOnly={readOnly}
          spellCheck={false}
          autoCapitalize="off"
          autoComplete="off"
          aria-invalid={issues.length > 0 || undefined}
          aria-describedby={issues.length > 0 ? `${id}-issues` : undefined}
          onChange={(event) => onChange(event.target.value)}
          onScroll={(event) => {
            if (gutter.current) gutter.current.scrollTop = event.currentTarget.scrollTop;
          }}
          onKeyDown={(event) => {
            // Tab indents by two spaces (YAML has no tabs); Escape then Tab leaves the box.
            if (event.key !== 'Tab' || event.shiftKey || readOnly) return;
            event.preventDefault();
            const target = event.currentTarget;
            const { selectionStart, selectionEnd } = target;
            const next = `${value.slice(0, selectionStart)}  ${value.slice(selectionEnd)}`;
            onChange(next);
            requestAnimationFrame(() => target.setSelectionRange(selectionStart + 2, selectionStart + 2));
          }}
        />
      </div>
      {issues.length > 0 && (
        <ul id={`${id}-issues`} className="issues" role="alert" aria-label="Problems">
          {issues.map((issue, index) => (
            <li key={index}>
              {issue.line !== null ? (
                <button type="button" className="link" onClick={() => goToLine(issue.line!)}>
                  Line {issue.line}
                </button>
              ) : (
                <strong>Workflow</strong>
              )}
              {issue.field && <code>{issue.field}</code>}
              <span>{issue.message}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
