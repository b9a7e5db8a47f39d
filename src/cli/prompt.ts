import { createInterface } from 'node:readline';

const CTRL_C = '\u0003';
const CTRL_D = '\u0004';
const BACKSPACE = ['\u007f', '\b'];

/** Asks for one visible line on a terminal (a username). */
export function promptLine(question: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string> {
  const lines = createInterface({ input, output, terminal: true });
  return new Promise((resolve) => {
    lines.question(question, (answer) => {
      lines.close();
      resolve(answer.trim());
    });
  });
}

/**
 * Asks for a secret on a terminal without echoing it: raw mode, characters collected by hand
 * (readline has no public "mute"). Ctrl-C cancels with null.
 */
export function promptHidden(question: string, input: NodeJS.ReadStream = process.stdin, output: NodeJS.WriteStream = process.stderr): Promise<string | null> {
  output.write(question);
  input.setRawMode(true);
  input.resume();
  input.setEncoding('utf8');
  let secret = '';
  return new Promise((resolve) => {
    const finish = (value: string | null) => {
      input.off('data', onData);
      input.setRawMode(false);
      input.pause();
      output.write('\n');
      resolve(value);
    };
    const onData = (chunk: string) => {
      for (const character of chunk) {
        if (character === '\r' || character === '\n' || character === CTRL_D) return finish(secret);
        if (character === CTRL_C) return finish(null);
        if (BACKSPACE.includes(character)) secret = secret.slice(0, -1);
        else if (character >= ' ') secret += character;
      }
    };
    input.on('data', onData);
  });
}

/** The first line of a piped stdin (`printf '%s' "$PASSWORD" | switchboard login …`), without its newline. */
export async function readFirstLine(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  let text = '';
  for await (const chunk of input) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split(/\r?\n/)[0] ?? '';
}

/** All of a piped stdin (a message for `chat`), without its final newline. */
export async function readAll(input: NodeJS.ReadableStream = process.stdin): Promise<string> {
  let text = '';
  for await (const chunk of input) text += chunk.toString();
  return text.replace(/\r?\n$/, '');
}
