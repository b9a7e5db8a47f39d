import { countTokens } from '../agent/tokens';
import { KNOWLEDGE_DEFAULTS } from './limits';

export interface ChunkOptions {
  targetTokens: number;
  overlapTokens: number;
}

interface Unit {
  text: string;
  tokens: number;
  /** A unit that begins a paragraph is joined with a blank line, others with a space. */
  paragraphStart: boolean;
}

/**
 * Cuts a document into chunks of about `targetTokens`: whole paragraphs when they fit, else whole
 * sentences, else runs of words. Each chunk after the first starts with the last units of the one
 * before, up to `overlapTokens`, so a passage cut at a border is still found whole.
 */
export function chunkText(
  text: string,
  options: ChunkOptions = { targetTokens: KNOWLEDGE_DEFAULTS.chunkTokens, overlapTokens: KNOWLEDGE_DEFAULTS.chunkOverlapTokens },
): string[] {
  const units = splitUnits(text, options.targetTokens);
  const chunks: string[] = [];
  let current: Unit[] = [];
  let tokens = 0;
  let fresh = 0; // units in `current` not already in the previous chunk
  for (const unit of units) {
    if (current.length > 0 && tokens + unit.tokens > options.targetTokens && fresh > 0) {
      chunks.push(render(current));
      current = overlap(current, options.overlapTokens, unit.tokens, options.targetTokens);
      tokens = current.reduce((sum, item) => sum + item.tokens, 0);
      fresh = 0;
    }
    current.push(unit);
    tokens += unit.tokens;
    fresh += 1;
  }
  if (fresh > 0) chunks.push(render(current));
  return chunks;
}

/** The trailing units of a chunk that fit the overlap and still leave room for the next unit. */
function overlap(units: Unit[], overlapTokens: number, nextTokens: number, targetTokens: number): Unit[] {
  const kept: Unit[] = [];
  let tokens = 0;
  for (let index = units.length - 1; index >= 0; index -= 1) {
    const unit = units[index];
    if (tokens + unit.tokens > overlapTokens || tokens + unit.tokens + nextTokens > targetTokens) break;
    kept.unshift(unit);
    tokens += unit.tokens;
  }
  return kept;
}

function render(units: Unit[]): string {
  return units.map((unit, index) => (index === 0 ? unit.text : `${unit.paragraphStart ? '\n\n' : ' '}${unit.text}`)).join('');
}

function splitUnits(text: string, targetTokens: number): Unit[] {
  const units: Unit[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    const clean = paragraph.trim();
    if (clean === '') continue;
    const tokens = countTokens(clean);
    if (tokens <= targetTokens) {
      units.push({ text: clean, tokens, paragraphStart: true });
      continue;
    }
    let first = true;
    for (const sentence of sentences(clean)) {
      for (const piece of fitWords(sentence, targetTokens)) {
        units.push({ ...piece, paragraphStart: first });
        first = false;
      }
    }
  }
  return units;
}

/** Sentences end at `.`, `!`, `?` (or a line break) followed by white space. */
function sentences(paragraph: string): string[] {
  return paragraph
    .split(/(?<=[.!?…])\s+|\n+/u)
    .map((sentence) => sentence.trim())
    .filter(Boolean);
}

/** A sentence longer than a chunk is cut into runs of words that fit. */
function fitWords(sentence: string, targetTokens: number): Omit<Unit, 'paragraphStart'>[] {
  const tokens = countTokens(sentence);
  if (tokens <= targetTokens) return [{ text: sentence, tokens }];
  const pieces: Omit<Unit, 'paragraphStart'>[] = [];
  let words: string[] = [];
  let wordTokens = 0;
  for (const word of sentence.split(/\s+/)) {
    // A single "word" longer than a chunk (a URL, base64) is cut by characters.
    const parts = countTokens(word) > targetTokens ? (word.match(new RegExp(`.{1,${targetTokens}}`, 'gsu')) ?? [word]) : [word];
    for (const part of parts) {
      const partTokens = countTokens(` ${part}`);
      if (words.length > 0 && wordTokens + partTokens > targetTokens) {
        const text = words.join(' ');
        pieces.push({ text, tokens: countTokens(text) });
        words = [];
        wordTokens = 0;
      }
      words.push(part);
      wordTokens += partTokens;
    }
  }
  if (words.length > 0) {
    const text = words.join(' ');
    pieces.push({ text, tokens: countTokens(text) });
  }
  return pieces;
}
