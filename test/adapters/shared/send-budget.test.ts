import { SendBudget } from '../../../adapters/shared/send-budget';

describe('SendBudget', () => {
  it('lets at most perChat.limit sends into one chat per window, in arrival order', async () => {
    const budget = new SendBudget({ global: { limit: 100, windowMs: 200 }, perChat: { limit: 3, windowMs: 200 } });
    const started = Date.now();
    const times: { i: number; at: number }[] = [];
    await Promise.all(Array.from({ length: 7 }, (_, i) => budget.take('c1').then(() => times.push({ i, at: Date.now() - started }))));
    expect(times.map((t) => t.i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // any 200 ms window holds at most 3 sends
    for (let k = 3; k < times.length; k++) expect(times[k]!.at - times[k - 3]!.at).toBeGreaterThanOrEqual(199);
    budget.close();
  });

  it('shares the global window across chats', async () => {
    const budget = new SendBudget({ global: { limit: 4, windowMs: 250 }, perChat: { limit: 10, windowMs: 250 } });
    const started = Date.now();
    const at: number[] = [];
    await Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((chat) => budget.take(chat).then(() => at.push(Date.now() - started))));
    at.sort((x, y) => x - y);
    expect(at.slice(0, 4).every((t) => t < 100)).toBe(true);
    expect(at[4]).toBeGreaterThanOrEqual(249);
    budget.close();
  });

  it('tryTake keeps a reserve for waiting sends and never jumps the queue', async () => {
    const budget = new SendBudget({ global: { limit: 100, windowMs: 1000 }, perChat: { limit: 3, windowMs: 1000 } });
    expect(budget.tryTake('c', 1)).toBe(true);
    expect(budget.tryTake('c', 1)).toBe(true);
    expect(budget.tryTake('c', 1)).toBe(false); // the last slot is kept for a send that must go out
    await budget.take('c');
    const pending = budget.take('c');
    expect(budget.waiting).toBe(1);
    expect(budget.tryTake('other', 0)).toBe(true); // another chat is unaffected
    budget.close();
    await expect(pending).rejects.toThrow('send budget closed');
  });

  it('pauses a chat (Retry-After) without pausing the others', async () => {
    const budget = new SendBudget({ global: { limit: 100, windowMs: 1000 }, perChat: { limit: 100, windowMs: 1000 } });
    budget.pause(150, 'slow');
    const started = Date.now();
    let otherAt = -1;
    await Promise.all([
      budget.take('slow').then(() => expect(Date.now() - started).toBeGreaterThanOrEqual(149)),
      budget.take('fast').then(() => (otherAt = Date.now() - started)),
    ]);
    expect(otherAt).toBeLessThan(100);
    expect(budget.tryTake('slow', 0)).toBe(true);
    budget.pause(100);
    expect(budget.tryTake('fast', 0)).toBe(false);
    budget.close();
  });

  it('refuses a window it cannot honour', () => {
    expect(() => new SendBudget({ global: { limit: 0, windowMs: 1000 }, perChat: { limit: 1, windowMs: 1000 } })).toThrow('limit >= 1');
  });
});
