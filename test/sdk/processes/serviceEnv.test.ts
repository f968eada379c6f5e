/**
 * A service's environment (SPEC §5.3), case by case: what is inherited, what envFrom maps, what it cannot
 * override, what a missing host variable gives; and that NODE_PATH really lets a CommonJS file require the
 * MCP SDK and zod with nothing installed beside it.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { isSdkError } from '../../../packages/sdk/src/errors.js';
import { resolveCommand } from '../../../packages/sdk/src/processes/resolveCommand.js';
import {
  buildServiceEnv,
  type ServiceEnvInput,
  serviceNodePath,
} from '../../../packages/sdk/src/processes/serviceEnv.js';
import { tempDir } from '../sessions/helpers.js';

const base: ServiceEnvInput = {
  serviceName: 'svc',
  hostEnv: {},
  workspace: '/ws',
  sourceDir: '/src',
  projectRoot: '/proj',
  marker: 'se1:p:1:2:inv',
};

const cases: [string, Partial<ServiceEnvInput>, Record<string, string | undefined>][] = [
  [
    'only the minimal set is inherited',
    {
      hostEnv: {
        HOME: '/h',
        PATH: '/bin',
        USER: 'u',
        LOGNAME: 'u',
        SHELL: '/bin/sh',
        TERM: 'xterm',
        SECRET: 's',
        NODE_OPTIONS: '--x',
      },
    },
    {
      HOME: '/h',
      PATH: '/bin',
      USER: 'u',
      LOGNAME: 'u',
      SHELL: '/bin/sh',
      TERM: 'xterm',
      SECRET: undefined,
      NODE_OPTIONS: undefined,
    },
  ],
  ['an unset inherited variable stays unset', { hostEnv: { PATH: '/bin' } }, { HOME: undefined, PATH: '/bin' }],
  ['a bash function export is not inherited', { hostEnv: { SHELL: '() { :; }' } }, { SHELL: undefined }],
  [
    'envFrom maps a host variable under another name',
    { hostEnv: { HOST_KEY: 'v' }, envFrom: { API_KEY: 'HOST_KEY' } },
    { API_KEY: 'v', HOST_KEY: undefined },
  ],
  [
    'envFrom cannot override the SDK variables',
    { hostEnv: { X: 'evil' }, envFrom: { SCIENCEEVOLVE_WORKSPACE: 'X', NODE_PATH: 'X', SCIENCEEVOLVE_MARKER: 'X' } },
    { SCIENCEEVOLVE_WORKSPACE: '/ws', SCIENCEEVOLVE_MARKER: 'se1:p:1:2:inv' },
  ],
  [
    'the SDK variables are set',
    {},
    { SCIENCEEVOLVE_WORKSPACE: '/ws', SCIENCEEVOLVE_MCP_SOURCE_DIR: '/src', SCIENCEEVOLVE_PROJECT_ROOT: '/proj' },
  ],
];

for (const [name, input, expected] of cases) {
  test(`buildServiceEnv: ${name}`, () => {
    const env = buildServiceEnv({ ...base, ...input });
    for (const [key, value] of Object.entries(expected)) assert.equal(env[key], value, key);
    assert.equal(env.NODE_PATH, serviceNodePath());
  });
}

test('buildServiceEnv: every missing host variable is named in one missing_env, never a value', () => {
  const hostEnv = { PRESENT: 'top-secret' };
  assert.throws(
    () => buildServiceEnv({ ...base, hostEnv, envFrom: { A: 'MISSING_ONE', B: 'PRESENT', C: 'MISSING_TWO' } }),
    (error) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'missing_env');
      assert.match(error.message, /service "svc".*MISSING_ONE \(for A\), MISSING_TWO \(for C\) are not set/);
      assert.deepEqual(error.data.variables, [
        { variable: 'A', hostVariable: 'MISSING_ONE' },
        { variable: 'C', hostVariable: 'MISSING_TWO' },
      ]);
      assert.ok(!JSON.stringify({ ...error.toJSON(), m: error.message }).includes('top-secret'));
      return true;
    },
  );
});

test('buildServiceEnv: an empty host variable is missing, like an unset one', () => {
  assert.throws(
    () => buildServiceEnv({ ...base, hostEnv: { E: '' }, envFrom: { EMPTY: 'E' } }),
    (error) => {
      assert.ok(isSdkError(error));
      assert.equal(error.code, 'missing_env');
      assert.match(error.message, /E \(for EMPTY\) is not set or empty/);
      return true;
    },
  );
});

test('buildServiceEnv never changes process.env', () => {
  const before = JSON.stringify(process.env);
  buildServiceEnv({ ...base, hostEnv: process.env, envFrom: {} });
  assert.equal(JSON.stringify(process.env), before);
});

test("NODE_PATH lets a CommonJS file elsewhere require the MCP SDK's server and zod", (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'probe.cjs');
  writeFileSync(
    file,
    "require('@modelcontextprotocol/sdk/server/index.js'); require('@modelcontextprotocol/sdk/server/mcp.js'); const { z } = require('zod'); console.log(typeof z.string);",
  );
  const result = spawnSync(process.execPath, [file], {
    cwd: dir,
    env: { NODE_PATH: serviceNodePath() },
    encoding: 'utf8',
  });
  assert.equal(result.stderr, '');
  assert.equal(result.stdout.trim(), 'function');
  const without = spawnSync(process.execPath, [file], { cwd: dir, env: {}, encoding: 'utf8' });
  assert.notEqual(without.status, 0, 'without NODE_PATH it would not resolve (the test proves something)');
});

const commandCases: [string, string, string | undefined, (r: string | undefined) => boolean][] = [
  ['node is the SDK’s own Node', 'node', '', (r) => r === process.execPath],
  [
    'a name is looked up on the given PATH',
    'sh',
    '/nonexistent:/bin:/usr/bin',
    (r) => r === '/bin/sh' || r === '/usr/bin/sh',
  ],
  ['a name not on PATH is not found', 'sh', '/nonexistent', (r) => r === undefined],
  ['an absolute path is taken as it is', '/bin/sh', '', (r) => r === '/bin/sh'],
  ['a path that does not exist is not found', '/no/such/thing', '', (r) => r === undefined],
  ['a directory is not a command', '/bin', '', (r) => r === undefined],
];

for (const [name, command, path, check] of commandCases) {
  test(`resolveCommand: ${name}`, () => {
    const resolved = resolveCommand(command, path, '/');
    assert.ok(check(resolved), `got ${resolved}`);
  });
}
