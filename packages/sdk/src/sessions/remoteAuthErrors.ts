/**
 * A remote's refusal to authorize, as our codes: an HTTP 401, the SDK's `UnauthorizedError` or a 403
 * `insufficient_scope` becomes `remote_auth_required` whose fix is the exact `auth login` command (or, for
 * static headers, names the variable to check); never `remote_unreachable`.
 */
import { isSdkError, SdkError } from '../errors.js';
import { redactUrl } from '../redact.js';
import type { RemoteSignIn } from './remoteAuth.js';

/** The SDK's error brands we branch on (its classes are branded: two copies may be loaded). */
export function brandOf(error: unknown): string | undefined {
  const ctor = (error as { constructor?: { mcpBrand?: unknown } } | null)?.constructor;
  const brand = ctor?.mcpBrand;
  return typeof brand === 'string' ? brand : undefined;
}

/** Whether `error` is the transport's `403 insufficient_scope` (step-up needed). */
export function isInsufficientScope(error: unknown): error is Error & { requiredScope?: string } {
  return brandOf(error) === 'mcp.InsufficientScopeError' || (error as Error | null)?.name === 'InsufficientScopeError';
}

/** The HTTP status an SDK transport error carries, if any. */
function httpStatus(error: unknown): number | undefined {
  const status = (error as { data?: { status?: unknown } } | null)?.data?.status;
  return typeof status === 'number' ? status : undefined;
}

/**
 * A remote's refusal as `remote_auth_required` (or the sign-in's own coded failure), or undefined when
 * `error` is not about authorization: an HTTP 401 (with or without our sign-in), the SDK's
 * `UnauthorizedError`, or a 403 `insufficient_scope` that was not stepped up.
 */
export function authFailure(
  error: unknown,
  context: {
    service: string;
    url: string;
    signIn?: RemoteSignIn | undefined;
    /** Header → host variable, when the entry sends static credentials. */
    headerSources?: Readonly<Record<string, string>> | undefined;
    loginCommand: string;
  },
): SdkError | undefined {
  if (isSdkError(error)) {
    const code = (error as SdkError).code;
    return code === 'remote_auth_required' || code === 'remote_auth_failed' ? (error as SdkError) : undefined;
  }
  const status = httpStatus(error);
  const unauthorized = status === 401 || brandOf(error) === 'mcp.UnauthorizedError';
  const scope = isInsufficientScope(error);
  if (!unauthorized && !scope) return undefined;
  const shown = redactUrl(context.url);
  const variables = Object.entries(context.headerSources ?? {});
  if (variables.length > 0 && context.signIn === undefined) {
    const named = variables.map(([header, variable]) => `"${header}" (from ${variable})`).join(', ');
    return new SdkError(
      'remote_auth_required',
      `remote service "${context.service}" refused the credentials of header ${named} with HTTP ${scope ? 403 : 401} (${shown})`,
      {
        remedy: `check the value of ${variables.map(([, v]) => v).join(', ')}: the server does not accept it (expired, revoked or for another service)`,
        data: { service: context.service, url: shown, variables: variables.map(([, v]) => v) },
        cause: error,
      },
    );
  }
  const what = scope
    ? `asks for a wider scope${(error as { requiredScope?: string }).requiredScope ? ` ("${(error as { requiredScope?: string }).requiredScope}")` : ''} than the stored sign-in holds`
    : 'answered HTTP 401: it needs a sign-in';
  return new SdkError(
    'remote_auth_required',
    `remote service "${context.service}" ${what} (${shown}); sign in with: ${context.loginCommand}`,
    {
      remedy: `sign in: ${context.loginCommand}`,
      data: { service: context.service, url: shown, login: context.loginCommand },
      cause: error,
    },
  );
}

/**
 * The exact command that signs in to `service` of `project` (named by every `remote_auth_required`).
 * Arguments that are not plain words are single-quoted for a POSIX shell.
 */
export function loginCommand(dataDir: string, project: string, service: string): string {
  const quote = (word: string) => (/^[A-Za-z0-9_./:@%+=,-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`);
  return `scienceevolve auth login --data-dir ${quote(dataDir)} --project ${quote(project)} --service ${quote(service)}`;
}
