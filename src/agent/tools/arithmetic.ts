/**
 * A small arithmetic evaluator (never `eval` or `Function`): numbers, + - * / % ^ (power, right
 * associative), parentheses, unary signs, the constants pi and e, and a fixed list of functions.
 * Anything else is an error naming where it stopped.
 */

export const ARITHMETIC_LIMITS = {
  /** Longest expression accepted. */
  maxLength: 1000,
  /** Deepest nesting of parentheses, signs and powers (bounds the recursion). */
  maxDepth: 64,
} as const;

const FUNCTIONS: Record<string, { arity: [number, number]; apply: (...args: number[]) => number }> = {
  abs: { arity: [1, 1], apply: Math.abs },
  sqrt: { arity: [1, 1], apply: Math.sqrt },
  cbrt: { arity: [1, 1], apply: Math.cbrt },
  exp: { arity: [1, 1], apply: Math.exp },
  ln: { arity: [1, 1], apply: Math.log },
  log: { arity: [1, 2], apply: (value, base) => (base === undefined ? Math.log10(value) : Math.log(value) / Math.log(base)) },
  sin: { arity: [1, 1], apply: Math.sin },
  cos: { arity: [1, 1], apply: Math.cos },
  tan: { arity: [1, 1], apply: Math.tan },
  asin: { arity: [1, 1], apply: Math.asin },
  acos: { arity: [1, 1], apply: Math.acos },
  atan: { arity: [1, 1], apply: Math.atan },
  floor: { arity: [1, 1], apply: Math.floor },
  ceil: { arity: [1, 1], apply: Math.ceil },
  round: { arity: [1, 2], apply: (value, digits = 0) => Math.round(value * 10 ** digits) / 10 ** digits },
  min: { arity: [1, 100], apply: Math.min },
  max: { arity: [1, 100], apply: Math.max },
  pow: { arity: [2, 2], apply: Math.pow },
};

const CONSTANTS: Record<string, number> = { pi: Math.PI, e: Math.E };

export class ArithmeticError extends Error {}

type Token = { kind: 'number'; value: number; at: number } | { kind: 'name'; value: string; at: number } | { kind: 'symbol'; value: string; at: number };

export function evaluate(expression: string): number {
  if (expression.length > ARITHMETIC_LIMITS.maxLength) throw new ArithmeticError(`the expression is longer than ${ARITHMETIC_LIMITS.maxLength} characters`);
  const parser = new Parser(tokenize(expression));
  const value = parser.expression(0);
  parser.expectEnd();
  if (Number.isNaN(value)) throw new ArithmeticError('the result is not a number (e.g. the square root of a negative number)');
  if (!Number.isFinite(value)) throw new ArithmeticError('the result is infinite (e.g. a division by zero)');
  return value;
}

function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  const pattern = /\s*(?:(\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|\.\d+(?:[eE][+-]?\d+)?)|([A-Za-z_][A-Za-z0-9_]*)|(\*\*|[-+*/%^(),×÷]))/y;
  let position = 0;
  while (position < text.length) {
    if (/^\s*$/.test(text.slice(position))) break;
    pattern.lastIndex = position;
    const match = pattern.exec(text);
    if (!match)
      throw new ArithmeticError(
        `unexpected character "${text.slice(position).trimStart()[0]}" at position ${text.length - text.slice(position).trimStart().length + 1}`,
      );
    const at = position + match[0].length - (match[1] ?? match[2] ?? match[3]).length;
    if (match[1] !== undefined) tokens.push({ kind: 'number', value: Number(match[1]), at });
    else if (match[2] !== undefined) tokens.push({ kind: 'name', value: match[2].toLowerCase(), at });
    else tokens.push({ kind: 'symbol', value: ({ '**': '^', '×': '*', '÷': '/' } as Record<string, string>)[match[3]] ?? match[3], at });
    position = pattern.lastIndex;
  }
  if (tokens.length === 0) throw new ArithmeticError('the expression is empty');
  return tokens;
}

/** Precedence climbing: + - (1) < * / % (2) < unary sign (3) < ^ (4, right associative). */
class Parser {
  private index = 0;
  constructor(private readonly tokens: Token[]) {}

  expression(depth: number): number {
    this.guard(depth);
    let value = this.term(depth + 1);
    while (this.peekSymbol('+') || this.peekSymbol('-')) {
      const operator = this.next().value;
      const right = this.term(depth + 1);
      value = operator === '+' ? value + right : value - right;
    }
    return value;
  }

  expectEnd(): void {
    const token = this.tokens[this.index];
    if (token) throw new ArithmeticError(`unexpected "${token.value}" at position ${token.at + 1}`);
  }

  private term(depth: number): number {
    let value = this.unary(depth + 1);
    while (this.peekSymbol('*') || this.peekSymbol('/') || this.peekSymbol('%')) {
      const operator = this.next().value;
      const right = this.unary(depth + 1);
      value = operator === '*' ? value * right : operator === '/' ? value / right : value % right;
    }
    return value;
  }

  private unary(depth: number): number {
    this.guard(depth);
    if (this.peekSymbol('-')) return (this.next(), -this.unary(depth + 1));
    if (this.peekSymbol('+')) return (this.next(), this.unary(depth + 1));
    return this.power(depth + 1);
  }

  private power(depth: number): number {
    const base = this.primary(depth + 1);
    if (!this.peekSymbol('^')) return base;
    this.next();
    // -2^2 is -(2^2) and 2^-1 is allowed: the exponent is a unary expression.
    return base ** this.unary(depth + 1);
  }

  private primary(depth: number): number {
    this.guard(depth);
    const token = this.tokens[this.index];
    if (!token) throw new ArithmeticError('the expression ends too early');
    this.index += 1;
    if (token.kind === 'number') return token.value;
    if (token.kind === 'symbol' && token.value === '(') {
      const value = this.expression(depth + 1);
      this.expectSymbol(')');
      return value;
    }
    if (token.kind === 'name') {
      // Own properties only: "constructor" or "__proto__" must not reach Object.prototype.
      if (Object.hasOwn(FUNCTIONS, token.value)) return this.call(token.value, FUNCTIONS[token.value], depth);
      if (Object.hasOwn(CONSTANTS, token.value)) return CONSTANTS[token.value];
      throw new ArithmeticError(`unknown name "${token.value}"; functions: ${Object.keys(FUNCTIONS).join(', ')}; constants: pi, e`);
    }
    throw new ArithmeticError(`unexpected "${token.value}" at position ${token.at + 1}`);
  }

  private call(name: string, fn: (typeof FUNCTIONS)[string], depth: number): number {
    this.expectSymbol('(');
    const args = [this.expression(depth + 1)];
    while (this.peekSymbol(',')) {
      this.next();
      args.push(this.expression(depth + 1));
    }
    this.expectSymbol(')');
    const [fewest, most] = fn.arity;
    if (args.length < fewest || args.length > most)
      throw new ArithmeticError(`${name} takes ${fewest === most ? fewest : `${fewest} to ${most}`} argument${most === 1 ? '' : 's'}, not ${args.length}`);
    return fn.apply(...args);
  }

  private guard(depth: number): void {
    if (depth > ARITHMETIC_LIMITS.maxDepth * 4)
      throw new ArithmeticError(`the expression is nested too deeply (more than ${ARITHMETIC_LIMITS.maxDepth} levels)`);
  }

  private peekSymbol(symbol: string): boolean {
    const token = this.tokens[this.index];
    return token?.kind === 'symbol' && token.value === symbol;
  }

  private expectSymbol(symbol: string): void {
    const token = this.tokens[this.index];
    if (!token || token.kind !== 'symbol' || token.value !== symbol) {
      throw new ArithmeticError(token ? `expected "${symbol}" at position ${token.at + 1}, found "${token.value}"` : `expected "${symbol}" at the end`);
    }
    this.index += 1;
  }

  private next(): Token {
    return this.tokens[this.index++];
  }
}
