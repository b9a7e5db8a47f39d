import { ArithmeticError, ARITHMETIC_LIMITS, evaluate } from './arithmetic';
import type { Tool } from './tool';
import { ToolError } from './tool-error';

export type CalculatorInput = {
  expression: string;
};

/** Exact arithmetic the model should not do in its head. */
export function calculatorTool(): Tool<CalculatorInput> {
  return {
    name: 'calculator',
    description:
      'Evaluate an arithmetic expression: numbers, + - * / % ^ (power), parentheses, pi, e, and abs, sqrt, cbrt, exp, ln, log (base 10, or log(x, base)), sin, cos, tan, asin, acos, atan, floor, ceil, round(x, digits), min, max, pow.',
    parameters: {
      type: 'object',
      properties: { expression: { type: 'string', minLength: 1, maxLength: ARITHMETIC_LIMITS.maxLength, description: 'e.g. "(1200 * 1.07^3) / 12"' } },
      required: ['expression'],
      additionalProperties: false,
    },
    requiresConfirmation: false,
    web: false,
    sideEffects: false,
    availability: () => ({ ok: true }),
    async run(input) {
      try {
        return { expression: input.expression, result: evaluate(input.expression) };
      } catch (error) {
        if (error instanceof ArithmeticError) throw new ToolError(`Cannot evaluate "${input.expression}": ${error.message}.`);
        throw error;
      }
    },
  };
}
