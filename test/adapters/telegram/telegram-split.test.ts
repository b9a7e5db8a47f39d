import { streamingView } from '../../../adapters/telegram/render';
import { splitMessage } from '../../../adapters/telegram/split';

/** Answers over Telegram's 4,096 characters become several messages, cut where a reader would. */
const LIMIT = 4096;

/** The pieces, joined again, are the text with only the whitespace at each cut gone. */
function expectNothingLost(text: string, pieces: string[]): void {
  expect(pieces.join('').replace(/\s+/g, '')).toBe(text.replace(/\s+/g, ''));
  for (const piece of pieces) expect(piece.length).toBeLessThanOrEqual(LIMIT);
}

const sentence = (n: number) => `Sentence number ${n} says something useful about the topic at hand.`;
const paragraph = (from: number, count: number) => Array.from({ length: count }, (_, k) => sentence(from + k)).join(' ');

it('leaves an answer within the limit whole', () => {
  expect(splitMessage('short answer', LIMIT)).toEqual(['short answer']);
  expect(splitMessage('x'.repeat(LIMIT), LIMIT)).toEqual(['x'.repeat(LIMIT)]);
  expect(splitMessage('', LIMIT)).toEqual(['']);
});

it('cuts at the last paragraph break that fits, in order', () => {
  // Three paragraphs of ~2,000 characters: two fit in the first message, the third follows.
  const paragraphs = [paragraph(0, 29), paragraph(100, 29), paragraph(200, 29)];
  const text = paragraphs.join('\n\n');
  expect(paragraphs[0]!.length + paragraphs[1]!.length + 2).toBeLessThanOrEqual(LIMIT);
  const pieces = splitMessage(text, LIMIT);
  expect(pieces).toEqual([`${paragraphs[0]}\n\n${paragraphs[1]}`, paragraphs[2]]);
  expectNothingLost(text, pieces);
});

it('prefers a paragraph break to a later sentence end, a sentence end to a later space', () => {
  const paragraphBreak = `${paragraph(0, 40)}\n\n${paragraph(50, 40)}`;
  const [first] = splitMessage(paragraphBreak, LIMIT);
  expect(first).toBe(paragraph(0, 40));

  // One paragraph of sentences: the cut follows a full stop, the next piece starts a sentence.
  const sentences = paragraph(0, 120);
  const pieces = splitMessage(sentences, LIMIT);
  expect(pieces.length).toBeGreaterThan(1);
  for (const piece of pieces) {
    expect(piece).toMatch(/^Sentence number \d+/);
    expect(piece).toMatch(/\.$/);
  }
  expectNothingLost(sentences, pieces);
});

it('ends a sentence after closing quotes or brackets, and knows ! ? and …', () => {
  const text = `${'word '.repeat(700)}he said "stop!" ${'more '.repeat(300)}`;
  const [first, second] = splitMessage(text, LIMIT);
  expect(first!.endsWith('"stop!"')).toBe(true);
  expect(second!.startsWith('more')).toBe(true);
});

it('falls back to a space between words, then to a hard cut that keeps emoji whole', () => {
  const words = 'lorem ipsum dolor '.repeat(400).trim();
  const pieces = splitMessage(words, LIMIT);
  for (const piece of pieces) expect(piece).toMatch(/^\S.*\S$/s);
  expectNothingLost(words, pieces);

  expect(splitMessage('x'.repeat(9000), LIMIT).map((piece) => piece.length)).toEqual([4096, 4096, 808]);
  // An emoji is two UTF-16 code units; one straddling the limit moves to the next piece whole.
  const emoji = `${'y'.repeat(LIMIT - 1)}😀${'z'.repeat(10)}`;
  const cut = splitMessage(emoji, LIMIT);
  expect(cut[0]).toBe('y'.repeat(LIMIT - 1));
  expect(cut[1]).toBe(`😀${'z'.repeat(10)}`);
});

it('does not cut in the first half of a piece just to find a break', () => {
  // The only paragraph break is early: a sentence end near the limit makes fuller messages.
  const text = `Intro.\n\n${paragraph(0, 100)}`;
  const [first] = splitMessage(text, LIMIT);
  expect(first!.length).toBeGreaterThan(LIMIT / 2);
  expect(first).toMatch(/\.$/);
});

it('shows the end of a streamed text longer than one message, emoji whole', () => {
  expect(streamingView('y'.repeat(5000), LIMIT)).toHaveLength(LIMIT);
  const view = streamingView(`${'😀'.repeat(3000)}`, LIMIT);
  expect(view.startsWith('…😀')).toBe(true);
  expect(view.length).toBeLessThanOrEqual(LIMIT);
});
