import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ConfirmDialog } from './confirm-dialog';

const request = {
  confirmation_id: 'k1',
  tool: 'write_file',
  parameters: { path: 'notes.txt', content: 'hi' },
  message: 'Allow "write_file" to write notes.txt?',
};

afterEach(cleanup);

describe('ConfirmDialog', () => {
  it('shows the tool, its parameters and the message, with the six answers as buttons', () => {
    render(<ConfirmDialog request={request} onAnswer={() => undefined} />);
    const dialog = screen.getByRole('dialog');
    expect(dialog.textContent).toContain('write_file');
    expect(screen.getByLabelText('Parameters').textContent).toContain('"path": "notes.txt"');
    expect(dialog.textContent).toContain('Allow "write_file" to write notes.txt?');
    const names = screen.getAllByRole('button').map((button) => button.textContent);
    expect(names).toEqual(['Allow y', 'Deny n', 'Allow all a', 'Disable d', 'Forbid all f', 'Cancel c']);
  });

  it.each([
    ['y', 'allow'],
    ['n', 'deny'],
    ['a', 'allow_all'],
    ['d', 'disable'],
    ['f', 'forbid_all'],
    ['c', 'cancel'],
  ])('answers on the CLI key %s (%s), once', (key, action) => {
    const onAnswer = vi.fn();
    render(<ConfirmDialog request={request} onAnswer={onAnswer} />);
    fireEvent.keyDown(window, { key });
    fireEvent.keyDown(window, { key });
    expect(onAnswer).toHaveBeenCalledTimes(1);
    expect(onAnswer).toHaveBeenCalledWith(action);
  });

  it('answers on a click and ignores keys with modifiers', () => {
    const onAnswer = vi.fn();
    render(<ConfirmDialog request={request} onAnswer={onAnswer} />);
    fireEvent.keyDown(window, { key: 'y', ctrlKey: true });
    expect(onAnswer).not.toHaveBeenCalled();
    fireEvent.click(screen.getByRole('button', { name: 'Deny n' }));
    expect(onAnswer).toHaveBeenCalledWith('deny');
  });
});
