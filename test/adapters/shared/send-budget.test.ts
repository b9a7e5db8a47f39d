import { SendBudget } from '../../../adapters/shared/send-budget';

/**
 * On jest's fake clock (Date.now and timers), so the windows are checked exactly, whatever the
 * machine's load: `settle` lets the budget's timers run through `ms` of fake time.
 */
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

async function settle<T>(work: Promise<T>, ms = 5_000): Promise<T> {
  await jest.advanceTimersByTimeAsync(ms);
  return work;
}
const sleep = (ms: number) => jest.advanceTimersByTimeAsync(ms);

describe('SendBudget', () => {
  it('lets at most perChat.limit sends into one chat per window, in arrival order', async () => {
    const budget = new SendBudget({ global: { limit: 100, windowMs: 200 }, perChat: { limit: 3, windowMs: 200 } });
    const started = Date.now();
    const times: { i: number; at: number }[] = [];
    await settle(Promise.all(Array.from({ length: 7 }, (_, i) => budget.take('c1').then(() => times.push({ i, at: Date.now() - started })))));
    expect(times.map((t) => t.i)).toEqual([0, 1, 2, 3, 4, 5, 6]);
    // any 200 ms window holds at most 3 sends, and each send goes as soon as its slot frees
    for (let k = 3; k < times.length; k++) expect(times[k]!.at - times[k - 3]!.at).toBeGreaterThanOrEqual(200);
    expect(times.map((t) => t.at)).toEqual([0, 0, 0, 201, 201, 201, 402]);
    budget.close();
  });

  it('shares the global window across chats', async () => {
    const budget = new SendBudget({ global: { limit: 4, windowMs: 250 }, perChat: { limit: 10, windowMs: 250 } });
    const started = Date.now();
    const at: number[] = [];
    await settle(Promise.all(['a', 'b', 'c', 'd', 'e', 'f'].map((chat) => budget.take(chat).then(() => at.push(Date.now() - started)))));
    at.sort((x, y) => x - y);
    // Four go at once; the other two wait for the first slots to leave the 250 ms window.
    expect(at).toEqual([0, 0, 0, 0, 251, 251]);
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
    let slowAt = -1;
    await settle(
      Promise.all([budget.take('slow').then(() => (slowAt = Date.now() - started)), budget.take('fast').then(() => (otherAt = Date.now() - started))]),
    );
    expect(slowAt).toBeGreaterThanOrEqual(150);
    expect(otherAt).toBe(0);
    expect(budget.tryTake('slow', 0)).toBe(true);
    budget.pause(100);
    expect(budget.tryTake('fast', 0)).toBe(false);
    budget.close();
  });

  it('counts a chat’s further windows (chatWindows) over the same sends, taking all slots at once', async () => {
    const budget = new SendBudget({
      global: { limit: 100, windowMs: 1000 },
      perChat: { limit: 1, windowMs: 50 },
      chatWindows: (chat) => (chat.startsWith('group:') ? [{ limit: 3, windowMs: 400 }] : []),
    });
    const started = Date.now();
    const at: number[] = [];
    await settle(Promise.all(Array.from({ length: 5 }, () => budget.take('group:1').then(() => at.push(Date.now() - started)))));
    // One per 50 ms (the chat window), and never more than 3 in any 400 ms (the group window).
    for (let k = 1; k < at.length; k++) expect(at[k]! - at[k - 1]!).toBeGreaterThanOrEqual(50);
    for (let k = 3; k < at.length; k++) expect(at[k]! - at[k - 3]!).toBeGreaterThanOrEqual(400);
    // Three sends into a fresh group: its chat window is free again after 50 ms, its group window not.
    await settle(Promise.all([budget.take('group:2'), budget.take('group:2'), budget.take('group:2')]), 200);
    await sleep(60);
    expect(budget.tryTake('group:2', 0)).toBe(false);
    // A chat without further windows has only the per-chat one.
    expect(budget.tryTake('private', 0)).toBe(true);
    await sleep(60);
    expect(budget.tryTake('private', 0)).toBe(true);
    budget.close();
  });

  it('refuses a window it cannot honour', () => {
    expect(() => new SendBudget({ global: { limit: 0, windowMs: 1000 }, perChat: { limit: 1, windowMs: 1000 } })).toThrow('limit >= 1');
    const odd = new SendBudget({ global: { limit: 1, windowMs: 1000 }, perChat: { limit: 1, windowMs: 1000 }, chatWindows: () => [{ limit: 1, windowMs: 0 }] });
    expect(() => odd.tryTake('chat')).toThrow('windowMs > 0');
  });
});
