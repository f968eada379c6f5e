/**
 * Pins the public API: the runtime export names of packages/sdk/src/index.ts. Adding or removing one is
 * a deliberate act: update this list with it (and the CHANGELOG).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as sdk from '../../packages/sdk/src/index.js';

const EXPORTS = [
  'AVAILABLE_HARNESS_TYPES',
  'AgentSchema',
  'BWRAP_ENV',
  'COMMAND_PRESETS',
  'CONSUMER_RANGES',
  'DATA_DIR_FORMAT',
  'DEFAULT_API_KEY_ENVS',
  'DEFAULT_BASE_URLS',
  'DEFAULT_COMMAND_TIMEOUT_MS',
  'DEFAULT_GATEWAY_PORT',
  'DEFAULT_HTTP_TIMEOUTS',
  'DEFAULT_MODEL_LOOP_OPTIONS',
  'DEFAULT_PIDS_MAX',
  'DEFAULT_PRESTART_IDLE_MS',
  'DEFAULT_QUEUE_NAME',
  'DEFAULT_STARTUP_BUDGET_MS',
  'ERROR_CODES',
  'EventJournal',
  'EventStream',
  'FIXED_CATALOG_NAMES',
  'FIXED_CATALOG_SERVICE',
  'GATEWAY_PROJECT_ID',
  'HARNESS_CONFIG_FORMATS',
  'HTTP_FACE_PATH',
  'HarnessSchema',
  'INIT_HARNESSES',
  'LAUNCH_FILE',
  'LIMITS',
  'MAX_DURATION_MS',
  'MAX_PIDS_MAX',
  'MIN_PIDS_MAX',
  'McpDefinitionSchema',
  'McpServerEntrySchema',
  'ModelLoopCheckpointSchema',
  'OrchestrationSchema',
  'ProjectPaths',
  'QUEUE_URL_ENV',
  'RESERVED_ENV_NAMES',
  'SERVICES_DIR',
  'ScriptSchema',
  'ScriptedHarness',
  'SdkError',
  'SupervisorClient',
  'TOOL_SUMMARY_BYTES',
  'ToolFilterSchema',
  'WORKFLOW_BASE_JSON',
  'WORKFLOW_JSON_SCHEMA_ID',
  'WORKFLOW_YAML',
  'WorkflowSchema',
  'acceptWorkflow',
  'applyWorkflow',
  'buildServiceEnv',
  'canonicalDefinitionJson',
  'canonicalWorkflowJson',
  'checkDataDir',
  'checkRunEvent',
  'closeHostSupervisor',
  'connectRemoteService',
  'createBridgeToken',
  'createCommandHarness',
  'createModelLoopHarness',
  'createSurface',
  'decideSandbox',
  'defaultDataDir',
  'defaultGatewayLogDir',
  'definitionDigest',
  'diffWorkflows',
  'fixedCatalog',
  'harnessConfig',
  'harnessFor',
  'hostSupervisor',
  'httpServerTimeouts',
  'httpToStdio',
  'initFolder',
  'isSdkError',
  'isSecretName',
  'listVersions',
  'loadWorkflow',
  'migrateDataDir',
  'newInvocationId',
  'openDataDir',
  'openPlainFile',
  'openProject',
  'packFolder',
  'packServiceFolder',
  'parseQueueUrl',
  'parseScript',
  'parseWorkflow',
  'planServices',
  'probeServices',
  'projectIdForWorkspace',
  'protectStdout',
  'publicError',
  'queueUrlFrom',
  'readAccepted',
  'readEvents',
  'readPlainFile',
  'readScriptFile',
  'readVersion',
  'readVersions',
  'readWorkflowFile',
  'redactUrl',
  'redactUrlsIn',
  'redactWorkflowUrls',
  'relayPath',
  'requireAccepted',
  'resolveProjectId',
  'resumeRuns',
  'runStatus',
  'runWorkflow',
  'sandboxAvailability',
  'sandboxCommand',
  'serveAgentServices',
  'serveCommand',
  'serveHttp',
  'serveStdio',
  'startGateway',
  'startInvocation',
  'startInvocationServices',
  'startQueueWorker',
  'startRun',
  'startSocketFace',
  'startStdioService',
  'storeSource',
  'sweepProjectStrays',
  'sweepStrays',
  'toSdkError',
  'unpackWorkflow',
  'validateWorkflow',
  'validateWorkflowText',
  'verifyProjects',
  'workflowJsonSchema',
  'workflowJsonSchemaText',
  'writeBridgeTokenFile',
];

test('the runtime exports of @scienceevolve/sdk are exactly the pinned list', () => {
  const actual = Object.keys(sdk).sort();
  const added = actual.filter((name) => !EXPORTS.includes(name));
  const removed = EXPORTS.filter((name) => !actual.includes(name));
  assert.deepEqual(
    { added, removed },
    { added: [], removed: [] },
    'the public API changed: update EXPORTS in test/sdk/api.test.ts if that is deliberate',
  );
  assert.deepEqual(actual, EXPORTS);
});

test('the pinned limits are those of SPEC §3.4 (and the documented additions)', () => {
  assert.deepEqual(sdk.LIMITS, {
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
  assert.ok(sdk.FIXED_CATALOG_NAMES.includes('scienceevolve'));
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
