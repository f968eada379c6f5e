/**
 * Static credentials of a remote entry (SPEC §8): `"headers": { "Authorization": "Bearer ${GITHUB_TOKEN}" }`.
 * A value is a template naming one host variable (`${VAR}`, optionally after one scheme word); the variable
 * is read when the service is connected, the value is sent only to the entry's URL (the transport follows
 * no redirect to another origin) and is never stored, shown or logged. A missing or empty variable fails
 * the connect with `missing_env` naming the variable, never a value.
 */
import { SdkError } from '../errors.js';
import { headerValueProblem } from '../redact.js';

/** `${VAR}` in a header template. */
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A remote entry's headers with their values read from the host. */
export interface ResolvedHeaders {
  /** Header → value (secret). */
  headers: Record<string, string>;
  /** Header → the host variable it came from (for messages). */
  sources: Record<string, string>;
}

/**
 * Reads every `${VAR}` of `templates` from `hostEnv` (never modified).
 *
 * @throws SdkError `missing_env` naming the service, header and variable; `invalid_header` when a value holds
 *   a line break or NUL (never quoting it).
 */
export function resolveHeaders(
  service: string,
  templates: Readonly<Record<string, string>>,
  hostEnv: Readonly<Record<string, string | undefined>>,
): ResolvedHeaders {
  const headers: Record<string, string> = Object.create(null);
  const sources: Record<string, string> = Object.create(null);
  for (const [name, template] of Object.entries(templates)) {
    let variable = '';
    const value = template.replace(VARIABLE, (_all, found: string) => {
      variable = found;
      const read = Object.hasOwn(hostEnv, found) ? hostEnv[found] : undefined;
      if (read === undefined || read === '') {
        throw new SdkError(
          'missing_env',
          `remote service "${service}" sends header "${name}" from the host variable ${found}, which is not set`,
          {
            remedy: `set ${found} in the environment of the process that runs the service (the run, the probe or the worker)`,
            data: { service, header: name, variable: found },
          },
        );
      }
      return read;
    });
    const problem = headerValueProblem(name, value);
    if (problem !== undefined) {
      throw new SdkError('invalid_header', `remote service "${service}": ${problem}`, {
        remedy: `give ${variable} its value on one line, without line breaks`,
        data: { service, header: name, variable },
      });
    }
    headers[name] = value;
    sources[name] = variable;
  }
  return { headers: { ...headers }, sources: { ...sources } };
}
