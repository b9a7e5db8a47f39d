// Types for the two deep modules of `natural` the router imports (its own types cover the root only).
declare module 'natural/lib/natural/tokenizers/regexp_tokenizer' {
  export class RegexpTokenizer {
    constructor(options: { pattern: RegExp; discardEmpty?: boolean });
    tokenize(text: string): string[];
  }
}
declare module 'natural/lib/natural/stemmers/porter_stemmer' {
  const PorterStemmer: { stem(word: string): string };
  export default PorterStemmer;
}
