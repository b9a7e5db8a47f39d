// Deep imports on purpose: natural's root module takes ~1 s, reads ./.env and prints (LIBRARIES.md).
import { RegexpTokenizer } from 'natural/lib/natural/tokenizers/regexp_tokenizer';
import PorterStemmer from 'natural/lib/natural/stemmers/porter_stemmer';

/** Words are runs of letters and digits in any script (natural's WordTokenizer drops "é"). */
const tokenizer = new RegexpTokenizer({ pattern: /[^\p{L}\p{N}]+/u });

/** Stems of words seen recently: chat repeats its words, and Porter stemming dominated routing time. */
const STEM_CACHE_LIMIT = 50_000;
/**
 * Longer "words" are not stemmed (nor cached): they are taken as they are. Real words are short;
 * Porter stemming is quadratic in the word's length (a 16,000-letter word takes 0.6 s, a 65,536-letter
 * message ~10 s of a blocked event loop), and a cache of 50,000 unique long tokens would hold
 * gigabytes. Keywords and messages go through the same function, so matching stays consistent.
 * With this cap the cache holds at most 50,000 × 2 × 48 characters.
 */
export const STEM_CACHE_MAX_WORD = 48;
const stemCache = new Map<string, string>();

function stem(word: string): string {
  if (word.length > STEM_CACHE_MAX_WORD) return word;
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemmed = PorterStemmer.stem(word);
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/** How many stems the cache holds and their characters (keys and values), for the test of its bound. */
export function stemCacheSize(): { entries: number; characters: number } {
  let characters = 0;
  for (const [word, stemmed] of stemCache) characters += word.length + stemmed.length;
  return { entries: stemCache.size, characters };
}

/** Lowercased Porter stems of the words of `text`, in order: "Deploying payments" → ["deploi", "payment"]. */
export function stems(text: string): string[] {
  return tokenizer.tokenize(text.toLowerCase()).map(stem);
}
