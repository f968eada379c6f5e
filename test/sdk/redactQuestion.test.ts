/**
 * A question's schema as the journal (and so the run viewer) shows it: a secret field keeps its type and
 * description, its suggested values are REDACTED; other fields, and the schema's own members, are kept.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { REDACTED, redactQuestionSchema } from '../../packages/sdk/src/redact.js';

test('a secret field of a question shows no default, example, const or enum; other fields are kept', () => {
  const schema = {
    type: 'object',
    required: ['date', 'token'],
    properties: {
      date: { type: 'string', format: 'date', default: '2026-12-24', description: 'when' },
      token: { type: 'string', description: 'your access token', default: 'tok-default-1' },
      pin: { type: 'string', format: 'password', examples: ['1234'], enum: ['1234', '9999'] },
      code: { type: 'string', writeOnly: true, const: 'c-1' },
      note: { type: 'string', 'x-secret': true },
    },
  };
  const shown = redactQuestionSchema(schema) as { properties: Record<string, Record<string, unknown>> };
  assert.deepEqual(shown.properties.date, schema.properties.date);
  assert.deepEqual(shown.properties.token, { type: 'string', description: 'your access token', default: REDACTED });
  assert.deepEqual(shown.properties.pin, { type: 'string', format: 'password', examples: REDACTED, enum: REDACTED });
  assert.deepEqual(shown.properties.code, { type: 'string', writeOnly: true, const: REDACTED });
  assert.deepEqual(shown.properties.note, { type: 'string', 'x-secret': true });
  assert.deepEqual((shown as Record<string, unknown>).required, ['date', 'token']);
  assert.ok(!JSON.stringify(shown).includes('tok-default-1') && !JSON.stringify(shown).includes('1234'));
  assert.equal(({} as Record<string, unknown>).default, undefined, 'Object.prototype untouched');
  // A schema without properties is shown as it is.
  assert.deepEqual(redactQuestionSchema({ type: 'object' }), { type: 'object' });
});
