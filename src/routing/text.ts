// Deep imports on purpose: natural's root module takes ~1 s, reads ./.env and prints (LIBRARIES.md).
import { RegexpTokenizer } from 'natural/lib/natural/tokenizers/regexp_tokenizer';
import PorterStemmer from 'natural/lib/natural/stemmers/porter_stemmer';

/** Words are runs of letters and digits in any script (natural's WordTokenizer drops "é"). */
const tokenizer = new RegexpTokenizer({ pattern: /[^\p{L}\p{N}]+/u });

/** Stems of words seen recently: chat repeats its words, and Porter stemming dominated routing time. */
const STEM_CACHE_LIMIT = 50_000;
const stemCache = new Map<string, string>();

function stem(word: string): string {
  let stemmed = stemCache.get(word);
  if (stemmed === undefined) {
    if (stemCache.size >= STEM_CACHE_LIMIT) stemCache.clear();
    stemmed = PorterStemmer.stem(word);
    stemCache.set(word, stemmed);
  }
  return stemmed;
}

/** Lowercased Porter stems of the words of `text`, in order: "Deploying payments" → ["deploi", "payment"]. */
export function stems(text: string): string[] {
  return tokenizer.tokenize(text.toLowerCase()).map(stem);
}
