/**
 * The CLI's `--json` shapes as docs/cli.md states them (section "`--json` shapes"): the table read from the
 * page, its TypeScript-like notation parsed, and a checker that names every place a document differs.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** One parsed shape. */
export type Shape =
  | { kind: 'primitive'; name: 'string' | 'number' | 'integer' | 'boolean' | 'null' | 'unknown' }
  | { kind: 'literal'; value: string | boolean }
  | { kind: 'array'; item: Shape }
  | { kind: 'union'; options: Shape[] }
  | {
      kind: 'object';
      /** The named keys (a Map: a key such as `constructor` is a key like any other). */
      fields: Map<string, { shape: Shape; optional: boolean }>;
      /** `{ [name]: T }`: every other key's value. */
      record: Shape | undefined;
      /** `…`: further keys may appear, unchecked. */
      open: boolean;
    };

const PRIMITIVES = new Set(['string', 'number', 'integer', 'boolean', 'null', 'unknown']);
const TOKEN = /\s*(\{|\}|\[|\]|\(|\)|,|:|\?|\||…|\.\.\.|"[^"]*"|[A-Za-z_][A-Za-z0-9_-]*)/y;

function tokenize(text: string): string[] {
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    if (/^\s*$/.test(text.slice(TOKEN.lastIndex))) break;
    const at = TOKEN.lastIndex;
    const match = TOKEN.exec(text);
    if (match === null) throw new Error(`shape notation: cannot read "${text.slice(at, at + 20)}" in ${text}`);
    tokens.push(match[1] === '...' ? '…' : match[1]!);
  }
  return tokens;
}

/** Parses one shape in the notation of docs/cli.md. Throws naming the place it cannot read. */
export function parseShape(text: string): Shape {
  const tokens = tokenize(text);
  let at = 0;
  const peek = (offset = 0) => tokens[at + offset];
  const take = (expected?: string): string => {
    const token = tokens[at];
    if (token === undefined || (expected !== undefined && token !== expected)) {
      throw new Error(`shape notation: expected ${expected ?? 'more'} at token ${at} (${token ?? 'end'}) in ${text}`);
    }
    at += 1;
    return token;
  };

  function type(): Shape {
    const options = [postfix()];
    while (peek() === '|') {
      take('|');
      options.push(postfix());
    }
    return options.length === 1 ? options[0]! : { kind: 'union', options };
  }

  function postfix(): Shape {
    let shape = primary();
    while (peek() === '[' && peek(1) === ']') {
      take('[');
      take(']');
      shape = { kind: 'array', item: shape };
    }
    return shape;
  }

  function primary(): Shape {
    const token = take();
    if (token === '{') return object();
    if (token === '(') {
      const inner = type();
      take(')');
      return inner;
    }
    if (token.startsWith('"')) return { kind: 'literal', value: token.slice(1, -1) };
    if (token === 'true' || token === 'false') return { kind: 'literal', value: token === 'true' };
    if (PRIMITIVES.has(token)) return { kind: 'primitive', name: token as 'string' };
    throw new Error(`shape notation: unknown type "${token}" in ${text}`);
  }

  function object(): Shape {
    const shape: Extract<Shape, { kind: 'object' }> = {
      kind: 'object',
      fields: new Map(),
      record: undefined,
      open: false,
    };
    while (peek() !== '}') {
      if (peek() === '…') {
        take('…');
        shape.open = true;
      } else if (peek() === '[') {
        take('[');
        take();
        take(']');
        take(':');
        shape.record = type();
      } else {
        const key = take();
        const optional = peek() === '?';
        if (optional) take('?');
        take(':');
        if (shape.fields.has(key)) throw new Error(`shape notation: key "${key}" twice in ${text}`);
        shape.fields.set(key, { shape: type(), optional });
      }
      if (peek() !== '}') take(',');
    }
    take('}');
    return shape;
  }

  const shape = type();
  if (at !== tokens.length) throw new Error(`shape notation: unexpected "${peek()}" in ${text}`);
  return shape;
}

/** The shape written back in the notation (for messages). */
export function describe(shape: Shape): string {
  switch (shape.kind) {
    case 'primitive':
      return shape.name;
    case 'literal':
      return JSON.stringify(shape.value);
    case 'array':
      return `${shape.item.kind === 'union' ? `(${describe(shape.item)})` : describe(shape.item)}[]`;
    case 'union':
      return shape.options.map(describe).join(' | ');
    case 'object':
      return '{…}';
  }
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every place `value` differs from `shape`, as `$.path: what`; empty when it matches. */
export function checkShape(shape: Shape, value: unknown, path = '$'): string[] {
  switch (shape.kind) {
    case 'primitive': {
      const ok =
        shape.name === 'unknown' ||
        (shape.name === 'null' && value === null) ||
        (shape.name === 'integer' && Number.isInteger(value)) ||
        (shape.name === 'number' && typeof value === 'number' && Number.isFinite(value)) ||
        (shape.name === 'string' && typeof value === 'string') ||
        (shape.name === 'boolean' && typeof value === 'boolean');
      return ok ? [] : [`${path}: expected ${shape.name}, got ${JSON.stringify(value)}`];
    }
    case 'literal':
      return value === shape.value ? [] : [`${path}: expected ${describe(shape)}, got ${JSON.stringify(value)}`];
    case 'array':
      if (!Array.isArray(value)) return [`${path}: expected an array, got ${JSON.stringify(value)}`];
      return value.flatMap((item, i) => checkShape(shape.item, item, `${path}[${i}]`));
    case 'union': {
      const attempts = shape.options.map((option) => checkShape(option, value, path));
      if (attempts.some((problems) => problems.length === 0)) return [];
      // The closest option explains best: an object option when the value is an object, and so on.
      const sameKind = shape.options.findIndex((option) =>
        option.kind === 'object' ? isPlainObject(value) : option.kind === 'array' ? Array.isArray(value) : false,
      );
      return sameKind >= 0
        ? attempts[sameKind]!
        : [`${path}: expected ${describe(shape)}, got ${JSON.stringify(value)}`];
    }
    case 'object': {
      if (!isPlainObject(value)) return [`${path}: expected an object, got ${JSON.stringify(value)}`];
      const problems: string[] = [];
      for (const [key, field] of shape.fields) {
        if (!Object.hasOwn(value, key)) {
          if (!field.optional) problems.push(`${path}: missing key "${key}"`);
          continue;
        }
        problems.push(...checkShape(field.shape, value[key], `${path}.${key}`));
      }
      for (const key of Object.keys(value)) {
        if (shape.fields.has(key)) continue;
        if (shape.record !== undefined)
          problems.push(...checkShape(shape.record, value[key], `${path}[${JSON.stringify(key)}]`));
        else if (!shape.open) problems.push(`${path}: unexpected key "${key}" (not in the table of docs/cli.md)`);
      }
      return problems;
    }
  }
}

/** docs/cli.md, the page the table is read from. */
export const CLI_DOC = fileURLToPath(new URL('../../docs/cli.md', import.meta.url));

/**
 * The table of docs/cli.md's "`--json` shapes" section: command (as written, e.g. `workflow load`,
 * `services serve --http`, `error`) → its shape, parsed.
 */
export function jsonShapeTable(text = readFileSync(CLI_DOC, 'utf8')): Map<string, Shape> {
  const section = text.split(/^## /m).find((part) => part.startsWith('`--json` shapes'));
  if (section === undefined) throw new Error('docs/cli.md has no "## `--json` shapes" section');
  const block = /```text\n([\s\S]*?)```/.exec(section);
  if (block === null) throw new Error('the "`--json` shapes" section of docs/cli.md has no ```text block');
  const entries: Array<{ command: string; text: string }> = [];
  for (const line of block[1]!.split('\n')) {
    if (line.trim() === '') continue;
    const start = /^([a-z][a-z -]*[a-z]): (.*)$/.exec(line);
    if (start !== null) entries.push({ command: start[1]!, text: start[2]! });
    else if (/^\s/.test(line) && entries.length > 0) entries.at(-1)!.text += ` ${line.trim()}`;
    else throw new Error(`docs/cli.md's shape table: cannot read the line "${line}"`);
  }
  const table = new Map<string, Shape>();
  for (const { command, text: shape } of entries) {
    if (table.has(command)) throw new Error(`docs/cli.md's shape table lists "${command}" twice`);
    table.set(command, parseShape(shape));
  }
  return table;
}
