#!/usr/bin/env node
// The conformance suite's client under test (`conformance client --command "node scripts/conformance-client.mjs"`):
// the SDK's own remote-service client — connectRemoteService with the credentials remoteCredentials builds
// (the token store of a scratch data dir, a loopback sign-in whose browser is scripts/conformance-browser.mjs)
// — pointed at the scenario's server (its URL is the last argument; MCP_CONFORMANCE_SCENARIO names the
// scenario, MCP_CONFORMANCE_CONTEXT carries a pre-registered client's id and secret or key). Connecting lists
// the server; then the scenario's tool is called (a question it asks answered with the form's defaults). Exit 0 when everything the scenario asks of a client was done.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  connectRemoteService,
  openInBrowser,
  remoteCredentials,
  startLoopbackSignIn,
} from '../packages/sdk/dist/authEntry.js';
import { answerWithDefaults } from '../packages/sdk/dist/sessions/elicitation.js';

const ROOT = new URL('..', import.meta.url).pathname;
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
/** This client's metadata document (SEP-991), offered where the server supports URL client ids. */
const CLIENT_METADATA_URL = 'https://conformance-test.local/client-metadata.json';

/** The tool each scenario's server expects a call to. */
const TOOL = {
  tools_call: ['add_numbers', { a: 5, b: 3 }],
  'sse-retry': ['test_reconnection', {}],
  'elicitation-sep1034-client-defaults': ['test_client_elicitation_defaults', {}],
};

const dataDir = mkdtempSync(join(tmpdir(), 'se-conformance-client-'));
const hostEnv = { ...process.env, BROWSER: join(ROOT, 'scripts/conformance-browser.mjs') };
const oauth = { clientMetadataUrl: CLIENT_METADATA_URL };
if (scenario === 'auth/client-credentials-basic') {
  Object.assign(oauth, {
    grant: 'client_credentials',
    clientId: context.client_id,
    clientSecretEnv: 'CONFORMANCE_SECRET',
  });
  hostEnv.CONFORMANCE_SECRET = context.client_secret;
} else if (scenario === 'auth/client-credentials-jwt') {
  Object.assign(oauth, {
    grant: 'client_credentials',
    clientId: context.client_id,
    authMethod: 'private_key_jwt',
    privateKeyEnv: 'CONFORMANCE_KEY',
    algorithm: context.signing_algorithm ?? 'ES256',
  });
  hostEnv.CONFORMANCE_KEY = context.private_key_pem;
} else if (scenario === 'auth/pre-registration') {
  Object.assign(oauth, { clientId: context.client_id, clientSecretEnv: 'CONFORMANCE_SECRET' });
  hostEnv.CONFORMANCE_SECRET = context.client_secret;
}

const loopback = await startLoopbackSignIn({
  print: (line) => process.stderr.write(`${line}\n`),
  open: (authorizationUrl) => openInBrowser(authorizationUrl, hostEnv),
  timeoutMs: 20_000,
});
let session;
let code = 0;
try {
  const entry = { name: 'conformance', url, oauth };
  const credentials = remoteCredentials(entry, { dataDir, projectId: 'conformance', hostEnv }, loopback);
  session = await connectRemoteService({ name: 'conformance', url, ...credentials });
  const [tool, args] = TOOL[scenario] ?? (scenario.startsWith('auth/') ? ['test-tool', {}] : [undefined, undefined]);
  if (tool !== undefined && session.catalog.tools.some((t) => t.name === tool)) {
    // A question from the server is answered as an attended operator who accepts the form's defaults.
    await session.callTool(tool, args, { question: { policy: 'operator', askOperator: answerWithDefaults } });
  }
} catch (error) {
  process.stderr.write(`conformance-client: ${error?.code ?? 'error'}: ${error?.message ?? error}\n`);
  code = 1;
} finally {
  await session?.close().catch(() => {});
  await loopback.close();
  rmSync(dataDir, { recursive: true, force: true });
}
process.exit(code);
