// The import picture of the packages, checked by `npm run lint` (dependency-cruiser). Why this tool and
// how the rules are built: docs/decisions/import-boundaries.md.
//
//   cli → sdk/index → engine ─┬→ harness ─→ faces → surface ─┬→ sessions → processes → supervisor (sub-path exports only)
//                             ├→ invocation ─────────────────┤
//                             ├→ reconfigure ────────────────┼→ store → workflow → errors
//                             └→ queue, events ──────────────┘
//   Beside them: gateway (supergateway supervised, http→stdio) → faces, sessions, processes.
//   Scale-out: sdk/index → worker (the queue worker) → engine/attemptSeam.ts only; engine → queue (BullMQ transport) → errors.
//
// Rules are written by folder, never by file, so a new file in a folder gets its folder's rule.
// Paths are relative to the working directory: run it from the repository root (npm run lint does).
'use strict';
const { readFileSync } = require('node:fs');
const { resolve } = require('node:path');

const SDK = '^packages/sdk/src/';

/**
 * The SDK's entry points: `index.ts` (the package root, the public API), `internal.ts` (the CLI's
 * `@scienceevolve/sdk/internal`) and the light entries `<name>Entry.ts` behind the sub-path exports
 * (`@scienceevolve/sdk/workflow`, `/store`, …). They sit above every layer.
 */
const ENTRIES = `${SDK}(index|internal|[A-Za-z]+Entry)\\.ts$`;

/** `@scienceevolve/sdk/internal`, as source and as built. */
const INTERNAL = '^packages/sdk/(src|dist)/internal\\.(ts|js|d\\.ts)$';

/**
 * The light entries: what the cheap CLI commands load. `agentServicesEntry.ts` (`/agent-services`) is an
 * entry but not light: it serves MCP.
 */
const LIGHT_ENTRIES = `${SDK}(workflow|store|status|harnessConfig)Entry\\.ts$`;

/** What a light entry never reaches, directly or through anything it imports: MCP, model, process and HTTP code. */
const HEAVY_PACKAGES = 'node_modules/(@modelcontextprotocol|@ai-sdk|ai|bullmq|ioredis|supergateway)/';
const HEAVY_CORE = '^(child_process|http|https|http2|node:child_process|node:http|node:https|node:http2)$';

/**
 * The telemetry seam (events/telemetry.ts): it imports nothing of the SDK at run time and loads the
 * OpenTelemetry implementation only when export is on, so every layer may call it (docs/telemetry.md).
 */
const TELEMETRY_SEAM = `${SDK}events/telemetry\\.ts$`;

/**
 * What each layer of packages/sdk/src may import inside packages/sdk/src besides its own folder
 * (a layer is a folder, or `errors.ts`). Everything not listed is above it, or beside it and kept apart.
 */
const LAYERS = {
  // The queue worker runs the engine's attempts for jobs taken from the queue: above the engine, through
  // the attempt seam alone (rule worker-through-attempt-seam).
  worker: [
    'engine',
    'queue',
    'schemas',
    'harness',
    'invocation',
    'events',
    'sessions',
    'processes',
    'store',
    'workflow',
    'errors',
  ],
  engine: [
    'harness',
    'invocation',
    'reconfigure',
    'events',
    'surface',
    'sessions',
    'processes',
    'store',
    'workflow',
    'queue',
    'schemas',
    'errors',
  ],
  // BullMQ transport only (coordinator client, worker consumer): job contents are the engine's.
  queue: ['schemas', 'errors'],
  // The harness interface, model loops, agent-CLI presets and their configs: uses a face or the surface.
  harness: ['faces', 'surface', 'processes', 'store', 'workflow', 'schemas', 'errors'],
  // supergateway supervised, its check, its loopback guard, http→stdio: beside the faces, using them.
  gateway: ['faces', 'sessions', 'processes', 'workflow', 'schemas', 'errors'],
  // The surface offered as stdio, HTTP and socket servers; the stdout guard.
  faces: ['surface', 'store', 'workflow', 'schemas', 'errors'],
  // The agent's one MCP surface over live sessions: catalog, dispatch, gate, limits, names, filters.
  surface: ['sessions', 'store', 'workflow', 'schemas', 'errors'],
  invocation: ['sessions', 'processes', 'store', 'workflow', 'schemas', 'errors'],
  reconfigure: ['store', 'workflow', 'schemas', 'errors'],
  events: ['store', 'workflow', 'schemas', 'errors'],
  // One service's MCP session, stdio or remote.
  sessions: ['processes', 'workflow', 'schemas', 'errors'],
  // Launch in its own group, registry, supervisor client, sandbox, admission, environment, teardown.
  processes: ['workflow', 'schemas', 'errors'],
  store: ['workflow', 'schemas', 'errors'],
  workflow: ['schemas', 'errors'],
  // The zod schemas of documents that cross a boundary (events, …): every layer may read with them.
  schemas: ['errors'],
  errors: [],
};

/** A layer's path pattern under packages/sdk/src: a folder, or the single file errors.ts. */
function layerPath(layer) {
  // errors.ts, redact.ts (the one redaction point) plainObject.ts (the one input-object test) and fileModes.ts (the one owner of
  // file modes) are the bottom
  // layer together: every layer may use them.
  return layer === 'errors' ? `${SDK}(errors|redact|plainObject|fileModes)\\.ts$` : `${SDK}${layer}/`;
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * The files a workspace package's `exports` map resolves to (package.json aside), as path patterns:
 * the only files of that package another package may reach. `withRoot: false` leaves out ".".
 */
function exportedFiles(pkg, { withRoot }) {
  const manifest = JSON.parse(readFileSync(resolve(`packages/${pkg}/package.json`), 'utf8'));
  const files = [];
  for (const [key, target] of Object.entries(manifest.exports ?? {})) {
    if (key === './package.json' || (key === '.' && !withRoot)) continue;
    const targets = typeof target === 'string' ? [target] : Object.values(target);
    for (const file of targets) files.push(`^packages/${pkg}/${escapeRegExp(file.replace(/^\.\//, ''))}$`);
  }
  return files;
}

const layerRules = Object.entries(LAYERS).map(([layer, allowed]) => ({
  name: `layer-${layer}`,
  comment:
    allowed.length === 0
      ? `packages/sdk/src/${layer === 'errors' ? 'errors.ts' : layer} imports nothing else of the SDK`
      : `packages/sdk/src/${layer === 'errors' ? 'errors.ts' : `${layer}/`} may import only ${allowed.join(', ')} of the SDK ` +
        '(imports point down the picture; the surface and the invocation never import each other, the engine wires them)',
  severity: 'error',
  from: { path: layerPath(layer) },
  to: { path: SDK, pathNot: [layerPath(layer), ...allowed.map(layerPath), ENTRIES, TELEMETRY_SEAM] },
}));

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...layerRules,
    {
      name: 'telemetry-seam-stands-alone',
      comment:
        'packages/sdk/src/events/telemetry.ts, which every layer may import, imports nothing of the SDK but the ' +
        'implementation it loads (dynamic import) when export is on',
      severity: 'error',
      from: { path: TELEMETRY_SEAM },
      to: { path: SDK, pathNot: `${SDK}events/telemetryExport\\.ts$` },
    },
    {
      name: 'sdk-index-is-the-top',
      comment:
        'nothing inside the SDK imports packages/sdk/src/index.ts, internal.ts or an entry (<name>Entry.ts): ' +
        'they are the API, above every layer',
      severity: 'error',
      from: { path: SDK },
      to: { path: ENTRIES },
    },
    {
      name: 'internal-for-the-cli-only',
      comment:
        '@scienceevolve/sdk/internal (packages/sdk/src/internal.ts) is what the CLI needs beyond the public API; ' +
        'nothing but the CLI imports it (examples and scripts use the package root, like any user)',
      severity: 'error',
      from: { pathNot: '^packages/cli/' },
      to: { path: INTERNAL },
    },
    {
      name: 'light-entries-stay-light',
      comment:
        'a light entry (packages/sdk/src/{workflow,store,status,harnessConfig}Entry.ts) never reaches MCP, model, process ' +
        'or HTTP code (node:child_process, node:http…), directly or through what it imports: the cheap CLI ' +
        'commands load only these',
      severity: 'error',
      from: { path: LIGHT_ENTRIES },
      to: { path: [HEAVY_PACKAGES, HEAVY_CORE], reachable: true },
    },
    {
      name: 'cli-light-path-stays-light',
      comment:
        'packages/cli/src/light.ts (the light commands, which the bin runs from one bundled file) reaches, directly ' +
        'or through a command, only the SDK light entries (/workflow, /store, /status, /harness-config, /errors, ' +
        '/harness-names), ' +
        'never the SDK root, /internal or /agent-services, nor MCP, model, process or HTTP code: whatever it ' +
        'reaches is bundled into dist/light.bundle.js and loaded by every light command',
      severity: 'error',
      from: { path: '^packages/cli/src/light\\.ts$' },
      to: {
        reachable: true,
        path: [HEAVY_PACKAGES, HEAVY_CORE, '^packages/sdk/'],
        pathNot:
          '^packages/sdk/dist/(workflowEntry|storeEntry|statusEntry|harnessConfigEntry|errors|schemas/harnessNames)\\.(js|d\\.ts)$',
      },
    },
    {
      name: 'sdk-folder-has-a-layer',
      comment:
        'every file of packages/sdk/src is index.ts or in a layer: a new folder gets its place in LAYERS of ' +
        '.dependency-cruiser.cjs (and in docs/decisions/import-boundaries.md) before it imports anything',
      severity: 'error',
      from: { path: SDK, pathNot: [...Object.keys(LAYERS).map(layerPath), ENTRIES] },
      to: {},
    },
    {
      name: 'worker-through-attempt-seam',
      comment:
        'the queue worker (packages/sdk/src/worker/) reaches the engine only through the attempt seam, ' +
        'packages/sdk/src/engine/attemptSeam.ts: it runs an attempt spec and returns its outcome, nothing of ' +
        'the run record, the run loop or the coordinator (docs/decisions/attempt-seam.md)',
      severity: 'error',
      from: { path: `${SDK}worker/` },
      to: { path: `${SDK}engine/`, pathNot: `${SDK}engine/attemptSeam\\.ts$` },
    },
    {
      name: 'supervisor-sub-paths-only',
      comment:
        'the SDK reaches @scienceevolve/supervisor only through its declared sub-path exports ' +
        '(package.json "exports"), never its root or its internals',
      severity: 'error',
      from: { path: '^packages/sdk/' },
      to: { path: '^packages/supervisor/', pathNot: exportedFiles('supervisor', { withRoot: false }) },
    },
    {
      name: 'supervisor-stands-alone',
      comment: 'the supervisor is an independent process: it imports nothing of the SDK or the CLI',
      severity: 'error',
      from: { path: '^packages/supervisor/' },
      to: { path: '^packages/(sdk|cli)/' },
    },
    {
      name: 'cli-only-through-sdk',
      comment:
        'the CLI is thin: besides its own files and Node built-ins it imports only @scienceevolve/sdk ' +
        '(its root or declared sub-paths), never SDK internals, the supervisor or another package',
      severity: 'error',
      from: { path: '^packages/cli/' },
      to: {
        pathNot: ['^packages/cli/', ...exportedFiles('sdk', { withRoot: true })],
        dependencyTypesNot: ['core'],
      },
    },
    {
      name: 'cli-option-table-is-data',
      comment:
        'packages/cli/src/optionTable.ts (every command and option: parsing, --help, docs/cli.md) is plain data ' +
        'that every command loads, the light ones too: it imports nothing but the SDK harness name lists ' +
        '(@scienceevolve/sdk/harness-names, which imports nothing), not even a Node built-in',
      severity: 'error',
      from: { path: '^packages/cli/src/optionTable\\.ts$' },
      to: { pathNot: '^packages/sdk/(src|dist)/schemas/harnessNames\\.(ts|js|d\\.ts)$' },
    },
    {
      name: 'harness-names-import-nothing',
      comment:
        'packages/sdk/src/schemas/harnessNames.ts is loaded by the CLI option table on every command: it ' +
        'imports nothing',
      severity: 'error',
      from: { path: '^packages/sdk/src/schemas/harnessNames\\.ts$' },
      to: {},
    },
    {
      name: 'no-circular',
      comment:
        'no import cycles: a cycle has no layer order and no defined load order. A cycle closed only by ' +
        'type-only imports (a file importing the types of the file that imports it) is erased at compile ' +
        'time and allowed; across layers the layer rules still count type-only imports',
      severity: 'error',
      from: { path: '^packages/' },
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    {
      name: 'no-unresolvable',
      comment: 'every import resolves (run `npm run build` first: workspace packages resolve to their dist/)',
      severity: 'error',
      from: { path: '^packages/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules', '^packages/[^/]+/dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.base.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.js', '.cjs', '.mjs', '.d.ts'],
    },
  },
};
