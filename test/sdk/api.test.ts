/**
 * Pins the public API: the names packages/sdk/src/index.ts exports (runtime and type-only), that no name is
 * both public and internal (`internal.ts`), that docs/api.md is what `npm run api` writes from the TSDoc and
 * names every public runtime export, and the branded `SdkError`. Adding or removing a public name is a
 * deliberate act: update the lists here with it (and the CHANGELOG, and `npm run api`).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import * as sdk from '../../packages/sdk/src/index.js';
import * as internal from '../../packages/sdk/src/internal.js';
// @ts-expect-error: a plain ES module without types (the generator of docs/api.md)
import { API_DOC, apiDocs, publicNames } from '../../scripts/api-docs.mjs';

/** The runtime exports of the package root. */
const RUNTIME = [
  'ERROR_CODES',
  'HARNESS_API_VERSION',
  'SdkError',
  'WorkflowSchema',
  'closeHostSupervisor',
  'createBridgeToken',
  'isSdkError',
  'loadWorkflow',
  'packFolder',
  'packServiceFolder',
  'parseWorkflow',
  'protectStdout',
  'readEvents',
  'resumeRuns',
  'runWorkflow',
  'serveAgentServices',
  'serveHttp',
  'serveStdio',
  'startRun',
  'toSdkError',
  'unpackWorkflow',
  'writeBridgeTokenFile',
];

/** The type-only exports of the package root (no value at run time; the API report holds their shapes). */
const TYPES = [
  'AgentHarness',
  'AgentServicesOptions',
  'CatalogChange',
  'CatalogNames',
  'CollectionPreference',
  'CommandHarness',
  'DuplicateListing',
  'ElicitationPolicy',
  'EngineOptions',
  'ErrorCode',
  'ErrorRecord',
  'EventBase',
  'GateState',
  'Harness',
  'HarnessConfigOf',
  'HarnessFactories',
  'HarnessFactory',
  'HarnessInput',
  'HarnessOutput',
  'HarnessReport',
  'HarnessRunContext',
  'HttpFace',
  'HttpFaceOptions',
  'HttpTimeouts',
  'InvocationAttemptFailedEvent',
  'InvocationCheckpointEvent',
  'InvocationEventBase',
  'InvocationFinishedEvent',
  'InvocationStartedEvent',
  'InvocationState',
  'InvocationStateEvent',
  'JournaledSteps',
  'LineLimits',
  'LoadWorkflowOptions',
  'LoadWorkflowResult',
  'McpDefinition',
  'McpServerEntry',
  'ModelCall',
  'ModelCalledEvent',
  'ModelLoopOptions',
  'ModelRetry',
  'ModelRetryEvent',
  'PackedFolder',
  'PrestartCollectedEvent',
  'PrestartReadyEvent',
  'ProcessRegistry',
  'ProtectedStdout',
  'Question',
  'QuestionAnswer',
  'QuestionOptions',
  'QueueSettings',
  'RemoteOAuth',
  'ResumeOptions',
  'RunEvent',
  'RunEventCatalogNames',
  'RunEventOf',
  'RunEventType',
  'RunFinishedEvent',
  'RunHandle',
  'RunOptions',
  'RunResult',
  'RunResumedEvent',
  'RunStartedEvent',
  'RunStatus',
  'SdkErrorOptions',
  'ServeAgentOptions',
  'ServedAgent',
  'ServiceCatalogChangedEvent',
  'ServiceCatalogRefreshFailedEvent',
  'ServiceEventFields',
  'ServiceExitedEvent',
  'ServiceFailedEvent',
  'ServiceProtocolPollutionEvent',
  'ServiceReadyEvent',
  'ServiceRecoveredEvent',
  'ServiceRestedEvent',
  'StdioFace',
  'StdioFaceOptions',
  'Surface',
  'SurfaceListChange',
  'SurfaceProgress',
  'SurfaceRequestOptions',
  'SurfaceRoute',
  'SurfaceTaskOptions',
  'TokenCounts',
  'TokenUsage',
  'ToolAskingEvent',
  'ToolCalledEvent',
  'ToolCallingEvent',
  'ToolFilter',
  'ToolQuestionEvent',
  'ToolTaskAcceptedEvent',
  'UnpackedFolder',
  'UsageTotals',
  'Workflow',
  'WorkflowAgent',
  'WorkflowOrchestration',
  'WorkflowReconfiguredEvent',
];

interface PublicName {
  name: string;
  section: string;
  kind: string;
  runtime: boolean;
  text: string;
}

const NAMES = publicNames() as PublicName[];

test('the runtime exports of @scienceevolve/sdk are exactly the pinned list', () => {
  const actual = Object.keys(sdk).sort();
  const added = actual.filter((name) => !RUNTIME.includes(name));
  const removed = RUNTIME.filter((name) => !actual.includes(name));
  assert.deepEqual(
    { added, removed },
    { added: [], removed: [] },
    'the public API changed: update RUNTIME in test/sdk/api.test.ts if that is deliberate',
  );
});

test('the type-only exports of index.ts are exactly the pinned list, each named once', () => {
  const types = NAMES.filter((n) => !n.runtime).map((n) => n.name);
  assert.deepEqual([...types].sort(), TYPES, 'update TYPES in test/sdk/api.test.ts if the change is deliberate');
  const all = NAMES.map((n) => n.name);
  assert.equal(new Set(all).size, all.length, 'a name is exported twice');
  assert.deepEqual(
    NAMES.filter((n) => n.runtime)
      .map((n) => n.name)
      .sort(),
    RUNTIME,
  );
  // Named exports only: a wildcard would hide additions from review (and from this list).
  assert.doesNotMatch(readFileSync(new URL('../../packages/sdk/src/index.ts', import.meta.url), 'utf8'), /export \*/);
});

test('no name is both public and internal, and internal.ts names its exports too', () => {
  const both = Object.keys(internal).filter((name) => Object.hasOwn(sdk, name));
  assert.deepEqual(both, []);
  assert.doesNotMatch(
    readFileSync(new URL('../../packages/sdk/src/internal.ts', import.meta.url), 'utf8'),
    /export \*/,
  );
});

test('docs/api.md is what `npm run api` writes, with a paragraph for every public name', () => {
  const written = readFileSync(API_DOC, 'utf8');
  assert.equal(written, apiDocs(), 'docs/api.md is stale: run `npm run api` and commit it');
  for (const name of Object.keys(sdk)) {
    assert.ok(written.includes(`**\`${name}\`**`), `docs/api.md has no paragraph for ${name}`);
  }
  for (const entry of NAMES) {
    assert.ok(entry.text.length > 0, `${entry.name} has no TSDoc summary`);
    assert.doesNotMatch(entry.text, /\{@link/, `${entry.name}: a link was left unconverted`);
  }
  // The worked example is the file test/e2e/apiExample.test.ts runs, verbatim.
  const example = readFileSync(new URL('../../examples/api/services.mjs', import.meta.url), 'utf8');
  assert.ok(written.includes(example.replace(/^#!.*\n/, '')));
});

test('the harness interface carries its version', () => {
  assert.equal(sdk.HARNESS_API_VERSION, 1);
});

test('the pinned limits are those of SPEC §3.4 (and the documented additions)', () => {
  assert.deepEqual(internal.LIMITS, {
    definitions: 32,
    filesPerDefinition: 100,
    charsPerFile: 500_000,
    definitionsJsonBytes: 1024 * 1024,
    serversPerAgent: 32,
    workflowJsonBytes: 2 * 1024 * 1024,
    args: 64,
    charsPerArg: 4096,
    nameChars: 64,
    pathChars: 1024,
    pathSegmentBytes: 255,
    invocationRetries: 10,
    toolPatterns: 256,
    toolPatternChars: 256,
  });
  assert.ok(internal.FIXED_CATALOG_NAMES.includes('scienceevolve'));
});

test('errors: every code is a stable snake_case string; SdkError carries code, remedy and data', () => {
  for (const code of sdk.ERROR_CODES) assert.match(code, /^[a-z]+(_[a-z]+)*$/);
  assert.equal(new Set(sdk.ERROR_CODES).size, sdk.ERROR_CODES.length);
  const error = new sdk.SdkError('unsafe_path', 'bad path', { remedy: 'fix it', data: { path: 'a' } });
  assert.deepEqual(error.toJSON(), { code: 'unsafe_path', message: 'bad path', remedy: 'fix it', data: { path: 'a' } });
  assert.equal(sdk.isSdkError(error), true);
  // Another copy of the SDK brands its errors with the same global symbol.
  const otherCopy = Object.assign(new Error('from another copy of the SDK'), {
    code: 'unsafe_path',
    [Symbol.for('scienceevolve.SdkError')]: true,
  });
  assert.equal(sdk.isSdkError(otherCopy), true);
  assert.equal(sdk.toSdkError(otherCopy).code, 'unsafe_path');
  // A look-alike with a code and a message is not an SDK error, whatever its code.
  assert.equal(sdk.isSdkError({ code: 'unsafe_path', message: 'a look-alike' }), false);
  assert.equal(sdk.isSdkError(Object.assign(new Error('x'), { code: 'unsafe_path' })), false);
  assert.equal(sdk.toSdkError({ code: 'unsafe_path', message: 'a look-alike' }).code, 'internal');
  assert.equal(sdk.isSdkError({ code: 'ENOENT', message: 'not ours' }), false);
  assert.equal(sdk.toSdkError(new Error('boom')).code, 'internal');
});
