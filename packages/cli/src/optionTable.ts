/**
 * The CLI's one table: every command and every option it takes — name, type, unit, range, the SDK option it
 * maps to and one help line. Parsing (`args.ts`), each command's `--help`, the top-level help and the option
 * lists in `docs/cli.md` (`scripts/cli-docs.mjs`) are made from it, so an option cannot be parsed without
 * being listed, or listed without being parsed.
 *
 * Plain data: every command loads it (the light ones too, and `--help` needs nothing else), so it costs one
 * small module and imports only the SDK's harness name lists (`@scienceevolve/sdk/harness-names`, a module
 * that itself imports nothing; a lint rule allows that one import). The SDK owns some of the numbers below
 * (`MAX_DURATION_MS`, the pids limits, the queue consumer's ranges); they are written out here, and
 * `test/cli/optionTable.test.ts` fails when one drifts from its owner.
 */
import { HARNESS_PRESETS, INIT_HARNESSES } from '@scienceevolve/sdk/harness-names';

/** A stated range of a whole-number option, both ends included. */
export interface IntRange {
  readonly min: number;
  readonly max: number;
}

/** The longest timer in milliseconds, 2^31 − 1 (a longer `setTimeout` fires at once); the SDK's `MAX_DURATION_MS`. */
export const MAX_TIMER_MS = 2_147_483_647;

/** The ranges of the CLI's whole-number options: every `int` option names one. */
export const RANGES = {
  /** A TCP port; 0 asks the system for a free one. */
  port: { min: 0, max: 65_535 },
  /** A duration in milliseconds: up to 2^31 − 1 (a longer `setTimeout` fires at once). */
  ms: { min: 0, max: MAX_TIMER_MS },
  /** A duration in milliseconds that must leave some time: at least 1. */
  positiveMs: { min: 1, max: MAX_TIMER_MS },
  /** A duration in whole seconds whose milliseconds fit a timer (2,147,483 s, about 24.8 days). */
  sec: { min: 0, max: Math.floor(MAX_TIMER_MS / 1000) },
  /** A timeout in whole seconds that must leave some time: at least 1. */
  positiveSec: { min: 1, max: Math.floor(MAX_TIMER_MS / 1000) },
  /** A stored version number. */
  version: { min: 1, max: MAX_TIMER_MS },
  /** A count of at least one. */
  count: { min: 1, max: MAX_TIMER_MS },
  /** `pids.max` of a service's control group: the SDK's `MIN_PIDS_MAX` to `MAX_PIDS_MAX`. */
  pidsMax: { min: 8, max: 4_194_304 },
  /** Jobs a worker runs at once: the SDK's `CONSUMER_RANGES.concurrency`. */
  concurrency: { min: 1, max: 256 },
  /** Stalls a job may survive: the SDK's `CONSUMER_RANGES.maxStalledCount`. */
  maxStalled: { min: 0, max: 1_000 },
} as const satisfies Record<string, IntRange>;

/** What a whole-number option counts, as help and docs name it. */
export type Unit = 'ms' | 's' | 'port' | 'count' | 'version';

/** One option of a command. */
export interface OptionSpec {
  /**
   * `string` takes a value; `int` takes a whole number in decimal digits within `range` (a usage error
   * otherwise); `boolean` is a switch.
   */
  readonly type: 'string' | 'int' | 'boolean';
  /** With `int`: what it counts. */
  readonly unit?: Unit;
  /** With `int`: the stated range. */
  readonly range?: IntRange;
  /** With `string`: the only values it takes (a usage error otherwise). */
  readonly choices?: readonly string[];
  /** The option may be given more than once (its values in order). */
  readonly multiple?: boolean;
  /** A one-letter alias. */
  readonly short?: string;
  /** The placeholder of its value in help (`D`, `N`, `F`). Default `N` for `int`, `V` for `string`. */
  readonly value?: string;
  /** The SDK option it maps to (`forwardTimeoutMs`), when it maps to one directly. */
  readonly sdk?: string;
  /** The environment variable that gives its value when the option is not given (the option wins). */
  readonly env?: string;
  /** Its default, in words, as help and docs print it. */
  readonly default?: string;
  /** The option that replaces it: it still works, and help and docs show it as deprecated. */
  readonly deprecated?: string;
  /** One line of help. */
  readonly help: string;
}

/** A command's options by name (without `--`). */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** One command (or subcommand: `services probe`). */
export interface CommandSpec {
  /** The words that name it: `services probe`. */
  readonly name: string;
  /** Its positional arguments as usage shows them: `<workflow.json>`. */
  readonly args?: string;
  /** What it does, one line. */
  readonly summary: string;
  /** Its options (the common ones, {@link COMMON_OPTIONS}, are added to every command). */
  readonly options: OptionSpecs;
}

/** Options every command takes. */
export const COMMON_OPTIONS = {
  json: { type: 'boolean', help: 'one machine-readable JSON document on stdout (progress and logs stay on stderr)' },
  debug: { type: 'boolean', help: 'print stack traces with errors' },
  help: { type: 'boolean', short: 'h', help: "this command's options" },
} as const satisfies OptionSpecs;

/** `--queue-file F` of run, resume and worker (the queue URL without a secret on the command line). */
const QUEUE_FILE = {
  type: 'string',
  value: 'F',
  help: 'the queue URL from this file: one line, a regular file of yours with mode 0600',
} as const;

const DATA_DIR = {
  'data-dir': {
    type: 'string',
    value: 'D',
    env: 'SCIENCEEVOLVE_DATA_DIR',
    help: 'the directory that holds all ScienceEvolve state',
  },
} as const satisfies OptionSpecs;

const PROJECT = {
  project: { type: 'string', value: 'P', help: 'the project id (default: derived from --workspace)' },
} as const satisfies OptionSpecs;

const PROJECT_OR_WORKSPACE = {
  ...DATA_DIR,
  ...PROJECT,
  workspace: { type: 'string', value: 'W', help: 'the workspace whose project is meant (instead of --project)' },
} as const satisfies OptionSpecs;

/**
 * The engine options every command that starts services takes (`run`, `resume`, `services probe`,
 * `services serve`): one block, so a limit reaches all of them.
 */
export const ENGINE_OPTIONS = {
  'startup-budget-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.positiveMs,
    sdk: 'startupBudgetMs',
    default: '35000',
    help: "milliseconds an invocation's services together have to be ready (a project service's from its admission)",
  },
  'grace-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.ms,
    sdk: 'graceMs',
    default: '2000',
    help: 'milliseconds between SIGTERM and SIGKILL when processes are collected',
  },
  'forward-timeout-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.positiveMs,
    sdk: 'forwardTimeoutMs',
    default: '60000',
    help: 'milliseconds a forwarded call (tools/call, resources/read, prompts/get) may take before forward_timeout',
  },
} as const satisfies OptionSpecs;

/** What `run` and `resume` take beyond {@link ENGINE_OPTIONS}: fair starts, warm starts and the queue. */
export const RUN_OPTIONS = {
  ...ENGINE_OPTIONS,
  'max-concurrent-starts': {
    type: 'int',
    unit: 'count',
    range: RANGES.count,
    sdk: 'maxConcurrentStarts',
    default: 'one per core',
    help: 'project-service starts of this run at once; the rest wait for a turn',
  },
  'start-queue-limit-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.ms,
    sdk: 'startQueueLimitMs',
    default: '300000',
    help: 'the longest a service start waits for its turn before start_queue_timeout',
  },
  'no-prestart': {
    type: 'boolean',
    help: "turn warm starts off (a worker's services started ahead of its next invocation)",
  },
  'prestart-idle-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.ms,
    sdk: 'prestartIdleMs',
    default: '60000',
    help: 'how long a prestarted set of services waits for its invocation before it is collected',
  },
  queue: {
    type: 'string',
    value: 'redis://…',
    help: 'run worker invocations as jobs on this Redis queue, for `scienceevolve worker` processes (no credentials: a command line is world-readable)',
  },
  'queue-env': {
    type: 'string',
    value: 'VAR',
    help: 'the queue URL from this environment variable (a URL with a password goes here or in --queue-file)',
  },
  'queue-file': QUEUE_FILE,
  'queue-name': {
    type: 'string',
    value: 'NAME',
    default: 'scienceevolve-invocations',
    help: 'the BullMQ queue name (with --queue)',
  },
  'queue-unreachable-ms': {
    type: 'int',
    unit: 'ms',
    range: RANGES.positiveMs,
    default: '30000',
    help: 'how long Redis may not answer before waiting for a job fails with queue_unreachable (with --queue)',
  },
} as const satisfies OptionSpecs;

/** What `services probe` and `services serve` share. */
const AGENT_SERVICES_OPTIONS = {
  ...DATA_DIR,
  ...PROJECT,
  workspace: { type: 'string', value: 'WS', help: "the task directory: every service's working directory" },
  workflow: {
    type: 'string',
    value: 'W',
    help: "load this workflow.json first (as `workflow load`); default: the project's accepted version",
  },
  agent: { type: 'string', value: 'A', help: 'the agent whose services start' },
  ...ENGINE_OPTIONS,
  'pids-max': {
    type: 'int',
    unit: 'count',
    range: RANGES.pidsMax,
    sdk: 'pidsMax',
    default: '512',
    help: "each service's control-group limit on processes and threads (where services run in control groups)",
  },
} as const satisfies OptionSpecs;

/** Every command, in the order of the help text. Subcommands are named by both words. */
export const COMMANDS = [
  {
    name: 'validate',
    args: '<workflow.json>',
    summary: 'check a workflow without touching anything',
    options: {},
  },
  {
    name: 'workflow load',
    args: '<workflow.json>',
    summary: 'validate, store sources, accept a new version if anything changed',
    options: {
      ...PROJECT_OR_WORKSPACE,
      workflow: { type: 'string', value: 'W', help: 'the workflow file (instead of the positional one)' },
    },
  },
  {
    name: 'workflow show',
    summary: 'print an accepted version',
    options: {
      ...PROJECT_OR_WORKSPACE,
      version: {
        type: 'int',
        unit: 'version',
        range: RANGES.version,
        default: 'the accepted one',
        help: 'the version to print',
      },
    },
  },
  {
    name: 'workflow history',
    summary: 'every accepted version: number, time, who applied it, what changed',
    options: PROJECT_OR_WORKSPACE,
  },
  {
    name: 'workflow diff',
    args: 'A B',
    summary: 'what changed between versions A and B',
    options: PROJECT_OR_WORKSPACE,
  },
  {
    name: 'workflow pack',
    args: '<dir>',
    summary: 'build workflow.json from a workflow folder (workflow.yaml, services/<name>/)',
    options: {
      out: { type: 'string', value: 'F', default: 'stdout', help: 'write workflow.json here' },
    },
  },
  {
    name: 'workflow unpack',
    args: '<workflow.json> <dir>',
    summary: 'write a workflow.json as a workflow folder (dir new or empty)',
    options: {},
  },
  {
    name: 'workflow verify',
    summary: 'check every version, the hash chain, accepted.json and every stored source; exit 1 on any problem',
    options: {
      ...DATA_DIR,
      project: { type: 'string', value: 'P', default: 'every project', help: 'the project to check' },
    },
  },
  {
    name: 'services probe',
    summary: "start an agent's services, list all they offer, collect them",
    options: {
      ...AGENT_SERVICES_OPTIONS,
      'hold-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.ms,
        help: 'print the report when all are ready, then keep the services up this long or until SIGINT/SIGTERM',
      },
      hold: {
        type: 'int',
        unit: 's',
        range: RANGES.sec,
        value: 'S',
        deprecated: 'hold-ms',
        help: 'as --hold-ms, in seconds',
      },
    },
  },
  {
    name: 'services serve',
    summary: "serve the agent's managed bridge (a stdio MCP server by default)",
    options: {
      ...AGENT_SERVICES_OPTIONS,
      http: { type: 'boolean', help: 'serve Streamable HTTP on 127.0.0.1 instead of stdio' },
      port: {
        type: 'int',
        unit: 'port',
        range: RANGES.port,
        default: '0 (a free port)',
        help: 'the HTTP face listens here (with --http)',
      },
      'token-file': {
        type: 'string',
        value: 'F',
        help: 'where the bearer token is written, mode 0600 (with --http; never to stdout)',
      },
      passthrough: {
        type: 'boolean',
        help: "the agent's single service keeps its own tool and prompt names",
      },
    },
  },
  {
    name: 'bridge http-to-stdio',
    summary: 'serve a Streamable HTTP MCP server as a stdio MCP server',
    options: {
      url: {
        type: 'string',
        value: 'U',
        help: 'the Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp (no credential in its query)',
      },
      'url-env': {
        type: 'string',
        value: 'VAR',
        help: 'the endpoint from this environment variable (a URL that carries a key)',
      },
      header: {
        type: 'string',
        multiple: true,
        value: '"K: V"',
        help: 'an HTTP header sent with every request (never logged; no credential: use --header-env)',
      },
      'header-env': {
        type: 'string',
        multiple: true,
        value: 'K=VAR',
        help: 'a header whose value is read from an environment variable, e.g. Authorization=MY_TOKEN',
      },
      'data-dir': {
        type: 'string',
        value: 'D',
        help: 'with --project: the data dir whose stored sign-in (scienceevolve auth login) for this URL is used',
      },
      project: {
        type: 'string',
        value: 'P',
        help: 'with --data-dir: the project whose sign-in for this URL is used (OAuth; refreshed as runs do)',
      },
      'timeout-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        sdk: 'timeoutMs',
        default: '60000',
        help: 'milliseconds each forwarded request may take',
      },
      'connect-timeout-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        sdk: 'connectTimeoutMs',
        default: '30000',
        help: 'milliseconds to connect to the server',
      },
    },
  },
  {
    name: 'gateway',
    summary: 'a stdio MCP server as Streamable HTTP at /mcp (supergateway, supervised)',
    options: {
      stdio: {
        type: 'string',
        value: '"<launch command>"',
        help: 'the launch command of the stdio MCP server, in quotes',
      },
      port: {
        type: 'int',
        unit: 'port',
        range: RANGES.port,
        sdk: 'port',
        default: '8000',
        help: 'supergateway listens here on 127.0.0.1; 0 picks a free port',
      },
      stateless: { type: 'boolean', help: 'a new server process for every request (supergateway --stateless)' },
      'log-dir': { type: 'string', value: 'D', sdk: 'logDir', help: "where supergateway's log goes" },
      'log-level': {
        type: 'string',
        choices: ['info', 'debug', 'none'],
        sdk: 'logLevel',
        default: 'info',
        help: "supergateway's log level",
      },
      'grace-ms': {
        ...ENGINE_OPTIONS['grace-ms'],
        help: 'milliseconds between SIGTERM and SIGKILL when the gateway is collected',
      },
      'ready-timeout-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        sdk: 'readyTimeoutMs',
        default: '30000',
        help: 'milliseconds for supergateway to listen and pass the checks',
      },
    },
  },
  {
    name: 'harness-config',
    summary: "print a harness's MCP configuration for an agent's bridge",
    options: {
      format: {
        type: 'string',
        choices: HARNESS_PRESETS,
        help: 'the harness whose configuration to print',
      },
      name: { type: 'string', value: 'N', default: 'scienceevolve', help: 'the MCP server name in the configuration' },
      ...DATA_DIR,
      ...PROJECT,
      workspace: { type: 'string', value: 'WS', help: 'the task directory the services work in (stdio face)' },
      agent: { type: 'string', value: 'A', help: 'the agent whose bridge the harness reaches (stdio face)' },
      passthrough: { type: 'boolean', help: "the agent's single service keeps its own names (stdio face)" },
      http: { type: 'boolean', help: 'reach a running `services serve --http` instead of starting one' },
      url: { type: 'string', value: 'U', help: 'the HTTP face, as `services serve --http` printed it (with --http)' },
      'token-env': {
        type: 'string',
        value: 'VAR',
        help: 'the environment variable that will hold the bearer token (with --http)',
      },
      'startup-timeout-sec': {
        type: 'int',
        unit: 's',
        range: RANGES.positiveSec,
        sdk: 'startupTimeoutSec',
        help: "the harness's server start-up timeout, where its configuration has one",
      },
      'tool-timeout-sec': {
        type: 'int',
        unit: 's',
        range: RANGES.positiveSec,
        sdk: 'toolTimeoutSec',
        help: "the harness's tool-call timeout, where its configuration has one",
      },
      'opencode-layout': {
        type: 'string',
        choices: ['v1', 'v2'],
        sdk: 'opencodeLayout',
        help: "opencode's configuration layout",
      },
    },
  },
  {
    name: 'run',
    args: '"<requirement>"',
    summary: 'take a requirement through Main; progress on stderr',
    options: {
      ...DATA_DIR,
      workflow: { type: 'string', value: 'W', help: 'the workflow.json to run' },
      workspace: { type: 'string', value: 'WS', help: 'the directory the agents work in' },
      ...PROJECT,
      script: { type: 'string', value: 'S', help: "the scripted harness's script (a script.json)" },
      ...RUN_OPTIONS,
    },
  },
  {
    name: 'resume',
    summary: 'continue interrupted and cancelled runs: Main continues from its checkpoint',
    options: {
      ...DATA_DIR,
      project: { type: 'string', value: 'P', help: 'the project whose runs to continue (see `scienceevolve status`)' },
      run: { type: 'string', value: 'R', default: 'every interrupted or cancelled run', help: 'the run to continue' },
      ...RUN_OPTIONS,
    },
  },
  {
    name: 'status',
    summary: 'runs, invocations, prestarted services, token usage, live services and the accepted version',
    options: {
      ...DATA_DIR,
      project: { type: 'string', value: 'P', default: 'every project', help: 'the project to report' },
    },
  },
  {
    name: 'worker',
    summary:
      'take invocation jobs of `run --queue` and run them on this machine; SIGTERM drains, a second signal hands them back',
    options: {
      queue: {
        type: 'string',
        value: 'redis://…',
        help: 'the Redis URL of the queue (redis://, rediss:// or unix://; no credentials: a command line is world-readable)',
      },
      'queue-env': {
        type: 'string',
        value: 'VAR',
        help: 'the queue URL from this environment variable (default: SCIENCEEVOLVE_QUEUE_URL when no queue option is given)',
      },
      'queue-file': QUEUE_FILE,
      'queue-name': {
        type: 'string',
        value: 'NAME',
        default: 'scienceevolve-invocations',
        help: 'the BullMQ queue name',
      },
      'data-dir': { ...DATA_DIR['data-dir'], help: "this worker's own data directory" },
      concurrency: {
        type: 'int',
        unit: 'count',
        range: RANGES.concurrency,
        sdk: 'concurrency',
        default: '1',
        help: 'jobs run at once',
      },
      'lock-duration-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        sdk: 'lockDurationMs',
        default: '30000',
        help: "how long a job's lock lasts unrenewed: how soon a dead worker's job goes to another",
      },
      'stalled-interval-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        sdk: 'stalledIntervalMs',
        default: '30000',
        help: "milliseconds between this worker's checks for stalled jobs (of dead workers)",
      },
      'max-stalled': {
        type: 'int',
        unit: 'count',
        range: RANGES.maxStalled,
        sdk: 'maxStalledCount',
        default: '1',
        help: 'how many times a job may stall and be taken again before it fails',
      },
    },
  },
  {
    name: 'ui',
    summary: 'the run viewer in the browser: prints a URL with its token; until SIGINT/SIGTERM',
    options: {
      ...DATA_DIR,
      port: {
        type: 'int',
        unit: 'port',
        range: RANGES.port,
        default: '0 (a free port)',
        help: 'the viewer listens here on 127.0.0.1',
      },
      host: { type: 'string', value: '127.0.0.1', help: 'only 127.0.0.1 (reach it from elsewhere with ssh -L)' },
    },
  },
  {
    name: 'auth login',
    summary: 'sign in to a remote service of a project (OAuth: prints and opens the URL, takes the loopback redirect)',
    options: {
      ...DATA_DIR,
      ...PROJECT,
      service: {
        type: 'string',
        value: 'S',
        help: 'the name of a remote entry ({ "name", "url" }) of the accepted workflow',
      },
      port: {
        type: 'int',
        unit: 'port',
        range: RANGES.port,
        default: '0 (any free port)',
        help: 'the loopback port the authorization server redirects the browser to',
      },
      'timeout-ms': {
        type: 'int',
        unit: 'ms',
        range: RANGES.positiveMs,
        default: '300000',
        help: 'milliseconds to wait for the browser to come back',
      },
    },
  },
  {
    name: 'auth status',
    summary: "what sign-ins a project holds and when they expire (never a token's value)",
    options: { ...DATA_DIR, ...PROJECT },
  },
  {
    name: 'auth logout',
    summary: 'sign out of a remote service: revoke its tokens where the server offers it, remove them',
    options: {
      ...DATA_DIR,
      ...PROJECT,
      service: { type: 'string', value: 'S', help: 'the name of a remote entry of the accepted workflow' },
    },
  },
  {
    name: 'migrate',
    summary: 'upgrade a data dir of an older layout',
    options: DATA_DIR,
  },
  {
    name: 'schema',
    summary: 'the JSON Schema of workflow.json (for "$schema" in editors)',
    options: {
      out: { type: 'string', value: 'F', default: 'stdout', help: 'write the schema here' },
    },
  },
  {
    name: 'init',
    args: '[dir]',
    summary: 'write a small working workflow folder (dir new or empty; default .)',
    options: {
      harness: {
        type: 'string',
        choices: INIT_HARNESSES,
        default: 'scripted',
        help: "the harness of the folder's agents",
      },
    },
  },
] as const satisfies readonly CommandSpec[];

/** The name of a command of the table. */
export type CommandName = (typeof COMMANDS)[number]['name'];

/** The command of the table named `name`. */
export type CommandOf<N extends CommandName> = Extract<(typeof COMMANDS)[number], { name: N }>;

/** The command of the table named `name` (its options typed as declared). */
export function command<N extends CommandName>(name: N): CommandOf<N> {
  return COMMANDS.find((c) => c.name === name) as CommandOf<N>;
}

/** The command of the table named `name`, or undefined for a name that is none (looked up, never indexed). */
export function findCommand(name: string): CommandSpec | undefined {
  return COMMANDS.find((c) => c.name === name);
}

/** The subcommands of group `group` (`services` → `services probe`, `services serve`); empty for a plain command. */
export function subcommandsOf(group: string): CommandSpec[] {
  return COMMANDS.filter((c) => c.name.startsWith(`${group} `));
}
