/**
 * Questions from servers on a session (SPEC §7): the policies `decline` and `operator` (unattended: the
 * call fails `question_unanswered` with the question; with `answerWithDefaults`: the schema's defaults are
 * accepted, as the conformance scenario `elicitation-sep1034-client-defaults` asks). Real v1 services.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { answerWithDefaults } from '../../../packages/sdk/src/sessions/elicitation.js';
import { assertAllGone, fixtureSpec, startService } from './helpers.js';

const ASKS = new URL('../../fixtures/elicitation/asksV1.cjs', import.meta.url).pathname;
const DEFAULTS = new URL('../../fixtures/elicitation/asksWithDefaults.cjs', import.meta.url).pathname;

function textOf(result: { content?: unknown }): string {
  return ((result.content as { text?: string }[] | undefined)?.[0]?.text ?? '') as string;
}

test('decline, unattended operator, and the defaults answer', async (t) => {
  const asks = await startService(t, {
    ...fixtureSpec(t, 'plain.cjs', { serviceName: 'trips' }),
    entrypointPath: ASKS,
  });
  const declined = await asks.session.callTool('book', { city: 'Oslo' }, { question: { policy: 'decline' } });
  assert.equal(textOf(declined), 'not booked: decline');
  await assert.rejects(
    asks.session.callTool('book', { city: 'Oslo' }, { question: { policy: 'operator' } }),
    (error: { code?: string; message: string }) =>
      error.code === 'question_unanswered' && /Which date should the trip to Oslo be\?/.test(error.message),
  );
  const defaults = await startService(t, {
    ...fixtureSpec(t, 'plain.cjs', { serviceName: 'profile' }),
    entrypointPath: DEFAULTS,
  });
  const answered = await defaults.session.callTool(
    'profile',
    {},
    {
      question: { policy: 'operator', askOperator: answerWithDefaults },
    },
  );
  assert.deepEqual(JSON.parse(textOf(answered)), {
    action: 'accept',
    content: { name: 'John Doe', age: 30, score: 95.5, status: 'active', verified: true },
  });
  await asks.session.close();
  await defaults.session.close();
  await assertAllGone([asks.session.pid, defaults.session.pid]);
});
