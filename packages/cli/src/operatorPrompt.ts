/**
 * The operator's answer to a service's question in an attended run (`agents.<name>.elicitation:
 * "operator"`, a terminal on stdin and stderr): the question and each field of its schema are shown on
 * stderr and read from stdin, one line a field (empty: the field's default, or left out). `!decline`
 * declines, `!cancel` cancels. A URL question never reaches here (it is shown, never opened).
 *
 * What the service wrote (its message, field names and descriptions) is shown with every control
 * character as `\xNN`, so it cannot drive the terminal; a field the schema marks secret (or whose name
 * looks like a credential) is read without echo.
 */
import { createInterface } from 'node:readline/promises';
import { Writable } from 'node:stream';
import type { EngineOptions } from '@scienceevolve/sdk';
import { isSecretField } from '@scienceevolve/sdk/internal';
import { visible } from './output.js';

type AskOperator = NonNullable<EngineOptions['askOperator']>;

/** A field's typed value from the line typed, or undefined when it does not parse as the field's type. */
function typedValue(line: string, field: { type?: unknown }): unknown {
  if (field.type === 'number' || field.type === 'integer') {
    if (!/^-?\d+(\.\d+)?$/.test(line)) return undefined;
    const n = Number(line);
    return field.type === 'integer' && !Number.isInteger(n) ? undefined : n;
  }
  if (field.type === 'boolean')
    return line === 'true' || line === 'yes' ? true : line === 'false' || line === 'no' ? false : undefined;
  return line;
}

/** Whether the operator can be asked: stdin and stderr are terminals. */
export function attended(): boolean {
  return process.stdin.isTTY === true && process.stderr.isTTY === true;
}

/** A field's hint: its type, description and default, as the service wrote them (made visible). */
function hintOf(field: Record<string, unknown>, secret: boolean): string {
  return [
    typeof field.type === 'string' ? field.type : undefined,
    typeof field.description === 'string' ? field.description : undefined,
    // A secret's default is not shown either.
    field.default === undefined || secret ? undefined : `default ${JSON.stringify(field.default)}`,
    secret ? 'secret, not echoed' : undefined,
  ]
    .filter((part) => part !== undefined)
    .map((part) => visible(part))
    .join(', ');
}

/** The prompt on this process's terminal. */
export const askOnTerminal: AskOperator = async (question, { agent }) => {
  // The line being typed reaches the terminal through here; muted while a secret is typed.
  let muted = false;
  const output = new Writable({
    write(chunk, _encoding, done) {
      if (!muted) process.stderr.write(chunk);
      done();
    },
  });
  const rl = createInterface({ input: process.stdin, output, terminal: true });
  // In raw mode Ctrl-C reaches readline, not the process: passed on as the signal (the run is cancelled),
  // and the question is cancelled with it.
  let interrupted = false;
  rl.on('SIGINT', () => {
    interrupted = true;
    rl.close();
    process.kill(process.pid, 'SIGINT');
  });
  const read = async (prompt: string): Promise<string | undefined> => {
    try {
      return (await rl.question(prompt)).trim();
    } catch (error) {
      if (interrupted) return undefined;
      throw error;
    }
  };
  try {
    process.stderr.write(`\n[${agent}] a service asks: ${visible(question.message)}\n`);
    const properties = (question.requestedSchema?.properties ?? {}) as Record<string, unknown>;
    // Field names come from the service: no prototype behind them.
    const content: Record<string, unknown> = Object.create(null);
    for (const [name, given] of Object.entries(properties)) {
      const field = (typeof given === 'object' && given !== null ? given : {}) as Record<string, unknown>;
      const secret = isSecretField(name, field);
      const prompt = `  ${visible(name)} (${hintOf(field, secret)}; !decline, !cancel): `;
      for (;;) {
        let line: string | undefined;
        if (secret) {
          process.stderr.write(prompt);
          muted = true;
          try {
            line = await read('');
          } finally {
            muted = false;
            process.stderr.write('\n');
          }
        } else {
          line = await read(prompt);
        }
        if (line === undefined || line === '!cancel') return { action: 'cancel' };
        if (line === '!decline') return { action: 'decline' };
        if (line === '') {
          if (field.default !== undefined) content[name] = field.default;
          break;
        }
        const value = typedValue(line, field);
        if (value !== undefined) {
          content[name] = value;
          break;
        }
        process.stderr.write(`  not a ${visible(String(field.type))}; type it again\n`);
      }
    }
    return { action: 'accept', content: { ...content } };
  } finally {
    rl.close();
  }
};
