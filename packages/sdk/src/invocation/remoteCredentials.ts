/**
 * A remote entry's credentials, as an invocation (a run, a probe, a queue worker) connects it: the static
 * headers read from host variables, and the stored OAuth sign-in of this project and resource (the data
 * dir's token store), with a pre-registered client's secret or private key read from a host variable or a
 * 0600 file. Nothing read here is written anywhere; a worker signs in with its own data dir (its own
 * `auth login`) or with client credentials from its own environment — tokens never travel in job data.
 */
import { readPrivateFileSync } from '../fileModes.js';
import { SdkError } from '../errors.js';
import { type ClientCredentials, loginCommand, RemoteSignIn } from '../sessions/remoteAuth.js';
import { resolveHeaders } from '../sessions/remoteHeaders.js';
import type { RemoteServiceSpec } from '../sessions/remoteService.js';
import { tokenStoreFile } from '../store/tokenStore.js';
import type { RemoteOAuth } from '../workflow/workflowSchema.js';

/** The most bytes a client secret or private key file may hold: 64 KiB. */
const SECRET_FILE_MAX_BYTES = 65_536;

/** What {@link remoteCredentials} needs to know about where it runs. */
export interface RemoteCredentialContext {
  dataDir: string;
  projectId: string;
  hostEnv: Readonly<Record<string, string | undefined>>;
}

/** The remote entry as planned. */
export interface RemoteEntry {
  name: string;
  url: string;
  headers?: Readonly<Record<string, string>> | undefined;
  oauth?: RemoteOAuth | undefined;
}

/**
 * The credential part of a {@link RemoteServiceSpec} for `entry`: headers from the host, and (unless the
 * entry sends its own `Authorization` header) the stored sign-in.
 *
 * @throws SdkError `missing_env` (a variable not set), `insecure_file` (a secret file readable by others, a
 *   link, not the user's), `io_error` (a secret file that cannot be read).
 */
export function remoteCredentials(
  entry: RemoteEntry,
  context: RemoteCredentialContext,
  interactive?: ConstructorParameters<typeof RemoteSignIn>[0]['interactive'],
): Pick<RemoteServiceSpec, 'headers' | 'headerSources' | 'signIn' | 'loginCommand'> {
  const login = loginCommand(context.dataDir, context.projectId, entry.name);
  const resolved = entry.headers === undefined ? undefined : resolveHeaders(entry.name, entry.headers, context.hostEnv);
  const ownAuthorization = Object.keys(entry.headers ?? {}).some((h) => h.toLowerCase() === 'authorization');
  const spec: Pick<RemoteServiceSpec, 'headers' | 'headerSources' | 'signIn' | 'loginCommand'> = {
    loginCommand: login,
  };
  if (resolved !== undefined) {
    spec.headers = resolved.headers;
    spec.headerSources = resolved.sources;
  }
  if (ownAuthorization) return spec;
  const client = clientCredentials(entry, context.hostEnv);
  spec.signIn = new RemoteSignIn({
    url: entry.url,
    service: entry.name,
    store: tokenStoreFile(context.dataDir, context.projectId, entry.url),
    loginCommand: login,
    ...(interactive === undefined ? {} : { interactive }),
    ...(client === undefined ? {} : { client }),
    ...(entry.oauth?.scope === undefined ? {} : { scope: entry.oauth.scope }),
    ...(entry.oauth?.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: entry.oauth.clientMetadataUrl }),
  });
  return spec;
}

/** The entry's pre-registered client with its secret or key read now, or undefined. */
function clientCredentials(
  entry: RemoteEntry,
  hostEnv: Readonly<Record<string, string | undefined>>,
): ClientCredentials | undefined {
  const oauth = entry.oauth;
  if (oauth?.clientId === undefined) return undefined;
  const secret = secretFrom(entry.name, 'client secret', oauth.clientSecretEnv, oauth.clientSecretFile, hostEnv);
  const key = secretFrom(entry.name, 'private key', oauth.privateKeyEnv, oauth.privateKeyFile, hostEnv);
  return {
    clientId: oauth.clientId,
    grant: oauth.grant ?? 'authorization_code',
    ...(secret === undefined ? {} : { clientSecret: secret }),
    ...(key === undefined ? {} : { privateKey: key }),
    ...(oauth.authMethod === undefined ? {} : { authMethod: oauth.authMethod }),
    ...(oauth.algorithm === undefined ? {} : { algorithm: oauth.algorithm }),
  };
}

function secretFrom(
  service: string,
  what: string,
  variable: string | undefined,
  file: string | undefined,
  hostEnv: Readonly<Record<string, string | undefined>>,
): string | undefined {
  if (variable !== undefined) {
    const value = Object.hasOwn(hostEnv, variable) ? hostEnv[variable] : undefined;
    if (value === undefined || value === '') {
      throw new SdkError(
        'missing_env',
        `remote service "${service}" reads its ${what} from the host variable ${variable}, which is not set`,
        {
          remedy: `set ${variable} in the environment of the process that connects the service (the run, the probe or the worker)`,
          data: { service, variable },
        },
      );
    }
    return value;
  }
  if (file !== undefined) return readSecretFile(service, what, file);
  return undefined;
}

/**
 * The secret in `path`: opened without following a link or blocking on a FIFO, checked on the handle (a
 * regular file, the user's own, 0600 or stricter), trimmed of a final line break. Errors name the file and
 * the fix, never its content.
 */
export function readSecretFile(service: string, what: string, path: string): string {
  const subject = `the ${what} file ${path} of remote service "${service}"`;
  const text = readPrivateFileSync(path, SECRET_FILE_MAX_BYTES, {
    subject,
    holds: `the ${what}`,
    data: { service },
  }).replace(/\r?\n$/, '');
  if (text.trim() === '') {
    throw new SdkError('usage', `${subject} is empty`, {
      remedy: `write the ${what} into it`,
      data: { service, path },
    });
  }
  return text;
}

/**
 * The stored sign-in of `project` for `url` (what `auth login` stored for a remote entry of that URL), for a
 * client outside an invocation (`bridge http-to-stdio --data-dir D --project P`): its token goes with every
 * request and is refreshed as a run's is; without one, a 401 is `remote_auth_required`.
 */
export function storedSignIn(options: {
  dataDir: string;
  project: string;
  url: string;
  service?: string;
}): RemoteSignIn {
  const service = options.service ?? 'bridge';
  return new RemoteSignIn({
    url: options.url,
    service,
    store: tokenStoreFile(options.dataDir, options.project, options.url),
    loginCommand: loginCommand(options.dataDir, options.project, '<the service of this URL>'),
  });
}
