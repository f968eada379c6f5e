/**
 * Every error a user can meet is an {@link SdkError}: a stable string `code`, a message that says what
 * was wrong and for what, a `remedy` that names the fix, and structured `data`. Callers branch on
 * `code` (see {@link isSdkError}), never on `instanceof`: two copies of the SDK may be loaded in one
 * process tree (the CLI and the supervisor).
 */

/** The stable error codes. Adding one is an API change; renaming one is a breaking change. @public */
export const ERROR_CODES = [
  'invalid_workflow',
  'invalid_json',
  'limit_exceeded',
  'unsafe_path',
  'unknown_reference',
  'duplicate_name',
  'reserved_name',
  'invalid_command',
  'immutable_definition',
  'reconfiguration_not_allowed',
  'remote_not_allowed',
  'missing_env',
  'command_not_found',
  'sandbox_unavailable',
  'startup_timeout',
  'start_queue_timeout',
  'initialize_failed',
  'service_exited',
  'pids_limit',
  'protocol_error',
  'forward_timeout',
  'unsupported_request',
  'remote_unreachable',
  'remote_auth_required',
  'remote_auth_failed',
  'service_busy',
  'service_resting',
  'result_too_large',
  'image_too_large',
  'invalid_arguments',
  'unknown_tool',
  'tool_removed',
  'data_dir_too_new',
  'data_dir_needs_migration',
  'unknown_project',
  'unknown_version',
  'store_tampered',
  'unknown_agent',
  'usage',
  'io_error',
  'supervisor_failed',
  'internal',
  'invalid_script',
  'not_a_git_repo',
  'worktree_tampered',
  'workspace_config_refused',
  'cancelled',
  'workflow_conflict',
  'collect_failed',
  'model_auth_failed',
  'model_request_failed',
  'model_unreachable',
  'max_turns_reached',
  'invalid_checkpoint',
  'harness_timeout',
  'harness_failed',
  'list_too_long',
  'list_cursor_repeated',
  'invalid_folder',
  'binary_file',
  'special_file',
  'folder_not_empty',
  'too_deep',
  'ill_formed_text',
  'harness_not_allowed',
  'env_not_allowed',
  'sandbox_not_allowed',
  'filter_not_allowed',
  'invalid_header',
  'queue_unreachable',
  'digest_mismatch',
  'workspace_unreachable',
  'worker_lost',
  'invalid_job',
  'insecure_file',
  'missing_dependency',
  'task_failed',
  'task_cancelled',
  'task_deadline',
  'task_unknown',
  'question_asked',
  'question_unanswered',
] as const;

/** One of {@link ERROR_CODES}. @public */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Options of {@link SdkError}. @public */
export interface SdkErrorOptions {
  /** What the user should do about it, as one sentence. */
  remedy?: string;
  /** Structured facts: paths, names, exit codes. Never a secret value or a service log. */
  data?: Record<string, unknown>;
  /** The underlying error. */
  cause?: unknown;
}

/**
 * The brand every {@link SdkError} carries, registered globally (`Symbol.for`) so that two copies of the SDK
 * loaded in one process (the CLI's and a library's) recognise each other's errors, and an object that merely
 * has a `code` and a `message` does not pass {@link isSdkError}.
 */
const SDK_ERROR_BRAND: unique symbol = Symbol.for('scienceevolve.SdkError') as never;

/** The one error class of the SDK. @public */
export class SdkError extends Error {
  /** The brand {@link isSdkError} checks. */
  readonly [SDK_ERROR_BRAND] = true;
  /** Always `SdkError`. */
  override readonly name = 'SdkError';
  /** The stable code callers branch on (see docs/errors.md). */
  readonly code: ErrorCode;
  /** What to do about it, when there is something to do. */
  readonly remedy: string | undefined;
  /** Structured facts of the failure (ids, paths, counts): never a secret. */
  readonly data: Record<string, unknown>;

  constructor(code: ErrorCode, message: string, options: SdkErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.remedy = options.remedy;
    this.data = options.data ?? {};
  }

  /** A plain JSON form, for `--json` output and events. */
  toJSON(): { code: ErrorCode; message: string; remedy?: string; data?: Record<string, unknown> } {
    return {
      code: this.code,
      message: this.message,
      ...(this.remedy === undefined ? {} : { remedy: this.remedy }),
      ...(Object.keys(this.data).length === 0 ? {} : { data: this.data }),
    };
  }
}

/**
 * True when `error` is an SDK error, whichever copy of the SDK made it: it carries the SDK's brand (a
 * global symbol), a string `code` and a `message`. A look-alike object with a `code` is not one.
 * @public
 */
export function isSdkError(error: unknown): error is SdkError {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as { [SDK_ERROR_BRAND]?: unknown })[SDK_ERROR_BRAND] === true &&
    typeof (error as { code?: unknown }).code === 'string' &&
    typeof (error as { message?: unknown }).message === 'string'
  );
}

/** Wraps anything thrown into an SdkError, keeping SDK errors as they are. @public */
export function toSdkError(error: unknown, fallback: ErrorCode = 'internal'): SdkError {
  if (error instanceof SdkError) return error;
  if (isSdkError(error)) {
    const e = error as SdkError;
    return new SdkError(e.code, e.message, { remedy: e.remedy, data: e.data, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SdkError(fallback, message, { cause: error });
}

/**
 * The `missing_dependency` error for an optional package that could not be loaded (ESM `import()` or
 * `require.resolve`), or `undefined` when `error` is anything else (then the caller rethrows it as it was).
 * The optional packages (`docs/decisions/optional-dependencies.md`) are loaded on use only.
 *
 * @param error what the load threw
 * @param packages the package that failed to load first, then any that go with it (all are named in the fix)
 * @param forWhat what needs them, e.g. `the openai model loop`
 */
export function missingDependency(
  error: unknown,
  packages: readonly [string, ...string[]],
  forWhat: string,
): SdkError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const message = error instanceof Error ? error.message : '';
  const missing = packages.find((name) => message.includes(`'${name}'`) || message.includes(`'${name}/`));
  if (missing === undefined) return undefined;
  const install = `npm install ${packages.join(' ')}`;
  // The fix is in the message too: some failure lines (a run's attempt) show the message alone.
  return new SdkError(
    'missing_dependency',
    `${forWhat} needs the package ${missing}, an optional dependency of ScienceEvolve that is not installed: ${install}`,
    { remedy: install, data: { package: missing, packages: [...packages] } },
  );
}

/**
 * The one place that maps each code to its fix: what to do when an error of that code carries no
 * `remedy` of its own (see {@link remedyOf}). A throw site that knows more (the variable to set, the
 * command to run) gives its own `remedy`, which wins. The CLI prints the fix as `fix: …` under every
 * error; docs/errors.md lists the same fixes.
 */
export const ERROR_FIXES: Readonly<Record<ErrorCode, string>> = {
  invalid_workflow: 'fix the workflow at the path named (add, remove or correct that key), then load it again',
  invalid_json: 'fix the JSON syntax at the position named',
  limit_exceeded: 'shrink it below the limit named: move large data out of the workflow, or split the service',
  unsafe_path: 'rename the file to a safe relative path (no "..", no leading "/", no backslash)',
  unknown_reference: 'add what is named (the definition, the file), or fix the name',
  duplicate_name: 'give each entry its own name',
  reserved_name: 'choose another name',
  invalid_command: 'give one executable name or path in "command" and put the arguments in "args"',
  immutable_definition:
    'send the accepted definition unchanged (or as {"accepted": "<digest>"}); add a changed version under a new name and move the references',
  reconfiguration_not_allowed:
    'the operator sets orchestration.allowMainReconfiguration to true and loads the workflow; send operator fields unchanged',
  remote_not_allowed: 'use a URL listed in orchestration.allowedRemoteUrls, or write a project service',
  missing_env:
    "set the variable named (to a non-empty value) in the environment that runs ScienceEvolve, or change the definition's envFrom",
  command_not_found: "install the command on the host's PATH, or give its full path in the definition's command",
  sandbox_unavailable:
    'install bubblewrap (apt-get install bubblewrap) or point SCIENCEEVOLVE_BWRAP at a working bwrap; or set orchestration.sandbox to "auto" or "off"',
  startup_timeout:
    'make the service answer initialize and its lists sooner (do slow work lazily); the end of its stderr (shown with the error, whole in the log named) says what it was doing',
  start_queue_timeout: 'start fewer invocations at once, or raise maxConcurrentStarts or startQueueLimitMs',
  initialize_failed:
    'fix the service so that it answers initialize and the list requests as an MCP server; the end of its stderr (shown with the error, whole in the log named) says why it did not',
  service_exited:
    'fix what the end of its stderr names (shown with the error, whole in the log named): a missing file or module, a syntax error, a crash; then run again',
  pids_limit: 'stop the service forking without bound, or raise pidsMax if it truly needs more processes',
  protocol_error: 'write only JSON-RPC messages to stdout (UTF-8, one a line); send logs and progress to stderr',
  forward_timeout:
    'make the call finish sooner or ask for less, or raise the forwarding timeout (--forward-timeout-ms)',
  unsupported_request: 'use the tools, resources and prompts methods',
  remote_unreachable: 'check the URL and that the endpoint is up and reachable from this host',
  service_busy: 'wait for an earlier call to finish, then retry',
  service_resting: "retry after the time given; read the service's stderr log for why its calls failed",
  result_too_large: 'ask the service for less (a page, a range)',
  image_too_large: 'ask for a smaller image (a thumbnail, a crop)',
  invalid_arguments: "call again with arguments that match the tool's inputSchema",
  unknown_tool: 'call a name listed by tools/list',
  tool_removed: 'list the tools again and call one listed now',
  data_dir_too_new: 'upgrade ScienceEvolve, or use another data dir',
  data_dir_needs_migration: 'run `scienceevolve migrate --data-dir <dir>` once',
  unknown_project: 'load a workflow with `scienceevolve workflow load`, or fix --project',
  unknown_version: 'pass a version from 1 to the accepted one',
  store_tampered:
    'run `scienceevolve workflow verify --data-dir <dir> --project <p>`, then restore the file named from a backup',
  unknown_agent: 'use one of the agents the accepted workflow has',
  usage: 'run `scienceevolve --help` for the commands and options',
  io_error:
    'check the path named: that it exists, is a directory or file as expected, is writable by this user, and has free space',
  supervisor_failed: 'read the supervisor log named in the message',
  internal: 'this is a bug: run again with --debug and report the stack trace',
  invalid_script: 'fix the script at the path named; end every invocation\'s steps with {"final": "…"}',
  not_a_git_repo:
    'run `git init && git commit --allow-empty -m init` in the workspace, or set orchestration.git to false',
  worktree_tampered:
    "save what you need from the role's worktree and remove the directory: the next invocation checks the branch out again",
  cancelled: 'continue the run with `scienceevolve resume`',
  workflow_conflict: 'call get_workflow, redo the change on the new version, and apply again',
  collect_failed: 'look at the process with `ps -o pid,stat,cmd -p <pid>` (state D: stuck in the kernel)',
  model_auth_failed: 'check the key and that it may use the model',
  model_request_failed: "check the harness's model, baseUrl and options against what the provider accepts",
  model_unreachable: 'check that the endpoint is up and reachable (for 429: wait, or raise the quota), then resume',
  max_turns_reached: "raise the harness's maxTurns, or narrow the task or the instructions",
  invalid_checkpoint: 'remove the checkpoint file to restart the invocation from its start, or restore it',
  harness_timeout: 'raise harness.timeoutMs, or give the agent a smaller task',
  harness_failed: "read the harness's stderr log named; check its model, baseUrl, apiKeyEnv and login",
  list_too_long: 'offer fewer entries, or fix pagination that never ends',
  list_cursor_repeated: 'give each page a new cursor, and none on the last page',
  invalid_folder: 'fix the folder as the message says (docs/workflow-folders.md)',
  binary_file: 'keep binary data out of the service (fetch it at run time), or encode it as text',
  special_file: 'copy the link target (or the file) into the folder as a regular file',
  folder_not_empty: 'give a new or empty folder',
  too_deep: 'flatten the document (a workflow needs 7 levels)',
  ill_formed_text: 'remove the lone surrogate, or write the whole character',
  harness_not_allowed:
    "send existing agents' harnesses unchanged; add agents without a harness; ask the operator for a defaultHarness",
  env_not_allowed: 'map only the variables in orchestration.mainMayMapEnv, or ask the operator to list the one needed',
  sandbox_not_allowed: 'remove "sandbox" from the definition; only the operator may opt a service out',
  filter_not_allowed: "keep the operator's tool patterns, or narrow them",
  invalid_header: 'give the header value on one line',
  queue_unreachable: 'start Redis (or restore the network to it), then `scienceevolve resume … --queue …`',
  digest_mismatch: 'find what writes to the queue; start the work again from the coordinator',
  workspace_unreachable:
    'mount the workspace at the same path on every worker, or run the worker beside the coordinator',
  worker_lost: "see the workers' logs; keep at least one worker running",
  invalid_job: 'run workers of the same ScienceEvolve version as the coordinator; keep other writers off the queue',
  insecure_file: 'chmod 600 the file named (chown it first if another user owns it); name the file itself, not a link',
  workspace_config_refused:
    'remove what the message names (read it first: a service may have written it), or run the CLI as a command harness without the preset',
  missing_dependency: 'run the npm install line the message ends with',
  remote_auth_required:
    'sign in with the scienceevolve auth login command the message names (or give the entry its credentials: headers from host variables, or client credentials)',
  remote_auth_failed:
    'sign in again with scienceevolve auth login (the stored sign-in was refused or revoked), or check the client credentials',
  task_failed: "read the service's message; fix the input or the service, then call the tool again",
  task_cancelled: 'call the tool again if the work is still wanted',
  task_deadline: 'raise orchestration.taskDeadlineMs, or ask for less',
  task_unknown: 'call the tool again if the work is still wanted (the service no longer knows the task)',
  question_asked: 'call the same tool again with the same arguments plus "answer": an object of the schema\'s fields',
  question_unanswered:
    'run attended (a terminal) with "elicitation": "operator", set it to "model", or open the URL yourself and call the tool again',
};

/** The fix of an error: its own `remedy`, else its code's in {@link ERROR_FIXES}. */
export function remedyOf(error: { code: string; remedy?: string | undefined }): string {
  if (error.remedy !== undefined && error.remedy !== '') return error.remedy;
  return Object.hasOwn(ERROR_FIXES, error.code) ? ERROR_FIXES[error.code as ErrorCode] : ERROR_FIXES.internal;
}
