// Deep imports on purpose: natural's root module takes ~1 s, reads ./.env and prints (LIBRARIES.md).
import { RegexpTokenizer } from 'natural/lib/natural/tokenizers/regexp_tokenizer';
import PorterStemmer from 'natural/lib/natural/stemmers/porter_stemmer';

/** Words are runs of letters and digits in any script (natural's WordTokenizer drops "é"). */
const tokenizer = new RegexpTokenizer({ pattern: /[^\p{L}\p{N}]+/u });

/** Lowercased Porter stems of the words of `text`, in order: "Deploying payments" → ["deploi", "payment"]. */
export function stems(text: string): string[] {
  return tokenizer.tokenize(text.toLowerCase()).map((word: string) => PorterStemmer.stem(word));
}
