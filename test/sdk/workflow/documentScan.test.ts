/**
 * Issue 13, items 3, 4 and 6: prototype names, lone surrogates and deep nesting are each reported by
 * validation with their own code and JSON path — never dropped, never `internal`, never a stack overflow.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { validateWorkflow, validateWorkflowText } from '../../../packages/sdk/src/workflow/validate.ts';

const SERVER = "require('node:process').stdin.resume();";

function codesOf(result: ReturnType<typeof validateWorkflow>): Array<[string, string]> {
  return result.ok ? [] : result.errors.map((e) => [e.code, e.path]);
}

test('a file named __proto__ is refused (reserved_name), never silently dropped from the stored source', () => {
  const text = `{"agents":{"main":{}},"mcpDefinitions":{"t":{"entrypoint":"s.cjs","files":{"s.cjs":"x","__proto__":"y"},"envFrom":{"__proto__":"HOME"}}}}`;
  assert.deepEqual(codesOf(validateWorkflowText(text)), [
    ['reserved_name', '$.mcpDefinitions.t.envFrom.__proto__'],
    ['reserved_name', '$.mcpDefinitions.t.files.__proto__'],
  ]);
  // Below a directory it is an ordinary name.
  const nested = `{"agents":{"main":{}},"mcpDefinitions":{"t":{"entrypoint":"s.cjs","files":{"s.cjs":"x","lib/__proto__":"y"}}}}`;
  const ok = validateWorkflowText(nested);
  assert.ok(ok.ok);
  assert.deepEqual(Object.keys(ok.workflow.mcpDefinitions.t?.files ?? {}), ['s.cjs', 'lib/__proto__']);
});

test('other prototype names (constructor, toString, valueOf, hasOwnProperty) are names like any other', () => {
  const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty', 'isPrototypeOf'];
  const files = Object.fromEntries([['s.cjs', SERVER], ...names.map((n) => [n, n])]);
  const envFrom = Object.fromEntries(names.map((n) => [n, n]));
  const doc = JSON.parse(
    JSON.stringify({
      agents: { main: { mcpServers: [{ name: 'c', project: 'constructor' }] }, constructor: {} },
      mcpDefinitions: { constructor: { entrypoint: 's.cjs', files, envFrom } },
    }),
  );
  const result = validateWorkflow(doc);
  assert.ok(result.ok, JSON.stringify(result.errors));
  const definition = new Map(Object.entries(result.workflow.mcpDefinitions)).get('constructor');
  assert.deepEqual(Object.keys(definition?.files ?? {}), ['s.cjs', ...names]);
  assert.deepEqual(Object.keys(definition?.envFrom ?? {}), names);
  assert.deepEqual(Object.keys(result.workflow.agents), ['main', 'constructor']);
});

test('two file keys that differ only in a lone surrogate are refused at validation (ill_formed_text)', () => {
  const text = `{"agents":{"main":{}},"mcpDefinitions":{"t":{"entrypoint":"s.cjs","files":{"s.cjs":"x","a\\ud800b":"1","a\\ufffdb":"2"}}}}`;
  const result = validateWorkflowText(text);
  assert.deepEqual(codesOf(result), [['ill_formed_text', '$.mcpDefinitions.t.files["a\\ud800b"]']]);
  // A paired surrogate is a whole character and is fine.
  const paired = `{"agents":{"main":{}},"mcpDefinitions":{"t":{"entrypoint":"s.cjs","files":{"s.cjs":"x","\\ud83d\\ude00.txt":"\\ud83d\\ude00"}}}}`;
  assert.ok(validateWorkflowText(paired).ok);
});

test('file contents and other strings with a lone surrogate are refused too: they would not round-trip as UTF-8', () => {
  const text = `{"agents":{"main":{"instructions":"hi \\udc00"}},"mcpDefinitions":{"t":{"entrypoint":"s.cjs","files":{"s.cjs":"x\\ud800"},"args":["\\udfff"]}}}`;
  assert.deepEqual(codesOf(validateWorkflowText(text)), [
    ['ill_formed_text', '$.agents.main.instructions'],
    ['ill_formed_text', '$.mcpDefinitions.t.args[0]'],
    ['ill_formed_text', '$.mcpDefinitions.t.files["s.cjs"]'],
  ]);
});

test('a deeply nested document is too_deep with the limit in the message, never a stack overflow', () => {
  for (const text of [
    `{"agents":{"main":{"instructions":${'['.repeat(100_000)}${']'.repeat(100_000)}}}}`,
    `{"agents":{"main":{}},"x":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
  ]) {
    const result = validateWorkflowText(text);
    assert.equal(result.ok, false);
    assert.equal(result.errors.length, 1, JSON.stringify(result.errors).slice(0, 300));
    assert.equal(result.errors[0]?.code, 'too_deep');
    assert.match(result.errors[0]?.message ?? '', /more than 32 levels/);
    assert.doesNotMatch(result.errors[0]?.message ?? '', /call stack/);
  }
  // 32 levels is still fine (then refused for what it is, not for its depth).
  const deep = `{"agents":{"main":{"instructions":${'['.repeat(29)}${']'.repeat(29)}}}}`;
  assert.deepEqual(codesOf(validateWorkflowText(deep)), [['invalid_workflow', '$.agents.main.instructions']]);
});
