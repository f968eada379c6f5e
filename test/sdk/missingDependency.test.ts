/**
 * `missingDependency`: an optional package that does not load becomes `missing_dependency` naming it and
 * the install line; any other failure (another package, a syntax error) is left as it was.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import test from 'node:test';
import { missingDependency } from '../../packages/sdk/src/errors.js';

const ABSENT = 'scienceevolve-no-such-package';

async function importFailure(specifier: string): Promise<unknown> {
  try {
    await import(specifier);
  } catch (error) {
    return error;
  }
  assert.fail(`${specifier} loaded`);
}

test('an ESM import of an absent optional package is missing_dependency with the install line', async () => {
  const error = await importFailure(ABSENT);
  const coded = missingDependency(error, [ABSENT, 'its-companion'], 'the thing');
  assert.ok(coded !== undefined, `not recognised: ${String(error)}`);
  assert.equal(coded.code, 'missing_dependency');
  assert.equal(
    coded.message,
    `the thing needs the package ${ABSENT}, an optional dependency of ScienceEvolve that is not installed: npm install ${ABSENT} its-companion`,
  );
  assert.equal(coded.remedy, `npm install ${ABSENT} its-companion`);
  assert.deepEqual(coded.data, { package: ABSENT, packages: [ABSENT, 'its-companion'] });
});

test('a require.resolve of an absent package is recognised too; a sub-path of it names the package', async () => {
  const require = createRequire(import.meta.url);
  let thrown: unknown;
  try {
    require.resolve(`${ABSENT}/package.json`);
  } catch (error) {
    thrown = error;
  }
  assert.equal(missingDependency(thrown, [ABSENT], 'x')?.code, 'missing_dependency');
  const sub = await importFailure(`${ABSENT}/sub/path.js`);
  assert.equal(missingDependency(sub, [ABSENT], 'x')?.data.package, ABSENT);
});

test('a failure that is not the named package missing is left alone', async () => {
  // Another package missing (a bug of ours, or a dependency of the named one that is not in the list).
  const other = await importFailure(ABSENT);
  assert.equal(missingDependency(other, ['bullmq'], 'x'), undefined);
  // A package whose name only starts like the absent one is not it.
  assert.equal(missingDependency(other, [ABSENT.slice(0, -3)], 'x'), undefined);
  assert.equal(missingDependency(new SyntaxError('Unexpected token'), [ABSENT], 'x'), undefined);
  assert.equal(missingDependency(undefined, [ABSENT], 'x'), undefined);
  assert.equal(missingDependency({ code: 'ERR_MODULE_NOT_FOUND' }, [ABSENT], 'x'), undefined);
});
