/**
 * Every error a user can meet is an {@link SdkError}: a stable string `code`, a message that says what
 * was wrong and for what, a `remedy` that names the fix, and structured `data`. Callers branch on
 * `code` (see {@link isSdkError}), never on `instanceof`: two copies of the SDK may be loaded in one
 * process tree (the CLI and the supervisor).
 */

/** The stable error codes. Adding one is an API change; renaming one is a breaking change. */
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
  'task_failed',
  'task_cancelled',
  'task_deadline',
  'task_unknown',
  'question_asked',
  'question_unanswered',
] as const;

/** One of {@link ERROR_CODES}. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** Options of {@link SdkError}. */
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

/** The one error class of the SDK. */
export class SdkError extends Error {
  /** The brand {@link isSdkError} checks. */
  readonly [SDK_ERROR_BRAND] = true;
  override readonly name = 'SdkError';
  readonly code: ErrorCode;
  readonly remedy: string | undefined;
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

/** Wraps anything thrown into an SdkError, keeping SDK errors as they are. */
export function toSdkError(error: unknown, fallback: ErrorCode = 'internal'): SdkError {
  if (error instanceof SdkError) return error;
  if (isSdkError(error)) {
    const e = error as SdkError;
    return new SdkError(e.code, e.message, { remedy: e.remedy, data: e.data, cause: error });
  }
  const message = error instanceof Error ? error.message : String(error);
  return new SdkError(fallback, message, { cause: error });
}
