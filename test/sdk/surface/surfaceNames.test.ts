import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { test } from 'node:test';
import { assignSurfaceNames, isValidSurfaceName } from '../../../packages/sdk/src/surface/surfaceNames.js';

const hash8 = (service: string, name: string) =>
  createHash('sha256').update(`${service}\u0000${name}`).digest('hex').slice(0, 8);

test('surface names: a table of plain, shortened and colliding names', () => {
  const long = 'x'.repeat(70);
  const cases: { services: [string, string][]; expected: string[]; why: string }[] = [
    { why: 'plain', services: [['search', 'query']], expected: ['search__query'] },
    { why: 'hyphens and underscores are valid', services: [['my-svc', 'do_it-now']], expected: ['my-svc__do_it-now'] },
    {
      why: 'a dot is outside [A-Za-z0-9_-]',
      services: [['svc', 'a.b']],
      expected: [`svc__a_b_${hash8('svc', 'a.b')}`],
    },
    {
      why: 'over 64 characters is cut to 55 plus _hash',
      services: [['svc', long]],
      expected: [`${`svc__${long}`.slice(0, 55)}_${hash8('svc', long)}`],
    },
    {
      why: 'exactly 64 characters stays',
      services: [['s', 'y'.repeat(61)]],
      expected: [`s__${'y'.repeat(61)}`],
    },
    {
      why: 'service a tool b__c and service a__b tool c collide: both get a suffix, neither is dropped',
      services: [
        ['a', 'b__c'],
        ['a__b', 'c'],
      ],
      expected: [`a__b__c_${hash8('a', 'b__c')}`, `a__b__c_${hash8('a__b', 'c')}`],
    },
    {
      why: 'a sanitized name cannot take a valid neighbour',
      services: [
        ['svc', 'a b'],
        ['svc', 'a_b'],
      ],
      expected: [`svc__a_b_${hash8('svc', 'a b')}`, 'svc__a_b'],
    },
  ];
  for (const c of cases) {
    const names = assignSurfaceNames(c.services.map(([service, name]) => ({ service, name })));
    assert.deepEqual(names, c.expected, c.why);
    for (const name of names) assert.ok(isValidSurfaceName(name), `${name} is valid (${c.why})`);
  }
});

test('surface names do not depend on the order of services', () => {
  const requests = [
    { service: 'a', name: 'b__c' },
    { service: 'a__b', name: 'c' },
    { service: 'z', name: 'q' },
  ];
  const forward = assignSurfaceNames(requests);
  const backward = assignSurfaceNames([...requests].reverse()).reverse();
  assert.deepEqual(forward, backward);
});

test('a tool listed twice by one service still gets two distinct names', () => {
  const names = assignSurfaceNames([
    { service: 's', name: 't' },
    { service: 's', name: 't' },
    { service: 's', name: 't' },
  ]);
  assert.equal(new Set(names).size, 3);
  for (const name of names) assert.ok(isValidSurfaceName(name));
});

test('passthrough keeps the service own names', () => {
  assert.deepEqual(assignSurfaceNames([{ service: 's', name: 'query' }], { passthrough: true }), ['query']);
});
