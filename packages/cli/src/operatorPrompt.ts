/**
 * The operator's answer to a service's question in an attended run (`agents.<name>.elicitation:
 * "operator"`, a terminal on stdin and stderr): the question and each field of its schema are shown on
 * stderr and read from stdin, one line a field (empty: the field's default, or left out). `!decline`
 * declines, `!cancel` cancels. A URL question never reaches here (it is shown, never opened).
 */
import { createInterface } from 'node:readline/promises';
import type { EngineOptions } from '@scienceevolve/sdk';

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

/** The prompt on this process's terminal. */
export const askOnTerminal: AskOperator = async (question, { agent }) => {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    process.stderr.write(`\n[${agent}] a service asks: ${question.message}\n`);
    const properties = (question.requestedSchema?.properties ?? {}) as Record<string, Record<string, unknown>>;
    // Field names come from the service: no prototype behind them.
    const content: Record<string, unknown> = Object.create(null);
    for (const [name, field] of Object.entries(properties)) {
      const hint = [
        field.type,
        field.description,
        field.default === undefined ? undefined : `default ${JSON.stringify(field.default)}`,
      ]
        .filter((part) => part !== undefined)
        .join(', ');
      for (;;) {
        const line = (await rl.question(`  ${name} (${hint}; !decline, !cancel): `)).trim();
        if (line === '!decline') return { action: 'decline' };
        if (line === '!cancel') return { action: 'cancel' };
        if (line === '') {
          if (field.default !== undefined) content[name] = field.default;
          break;
        }
        const value = typedValue(line, field);
        if (value !== undefined) {
          content[name] = value;
          break;
        }
        process.stderr.write(`  not a ${String(field.type)}; type it again\n`);
      }
    }
    return { action: 'accept', content: { ...content } };
  } finally {
    rl.close();
  }
};
