/**
 * `scienceevolve bridge http-to-stdio (--url U | --url-env VAR) [--header "K: V"]… [--header-env K=VAR]…`: a
 * stdio MCP server forwarding to a Streamable HTTP one. A command line is readable by every user of the
 * machine (`/proc/<pid>/cmdline`), so credentials come from variables: `--header-env Authorization=VAR`
 * and `--url-env VAR`; a credential given in `--header` or in `--url`'s query is a usage error.
 */
import { protectStdout } from '@scienceevolve/sdk';
import { storedSignIn } from '@scienceevolve/sdk/auth';
import { httpToStdio, isSecretName, redactUrl } from '@scienceevolve/sdk/internal';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

/** An environment variable's name, the only text of `--header-env`/`--url-env` an error may quote. */
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;

/** An HTTP header name (a token). */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** What the usage errors about credentials on the command line say to do instead. */
const ARGV_IS_PUBLIC = 'a command line is readable by every user of the machine (/proc/<pid>/cmdline)';

/** `Name: value` → [name, value]; the name must be an HTTP token, and not one that carries a credential. */
function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? '' : text.slice(0, colon).trim();
  if (!HEADER_NAME.test(name)) {
    // Never quoted: the text may be the secret itself (a value given without its name).
    throw usageError(
      '--header takes "Name: value", an HTTP header name (letters, digits, -) before the colon; the text given is not shown',
    );
  }
  const value = text.slice(colon + 1).trim();
  if (isSecretName(name) || /^(?:Bearer|Basic|Token|Digest)\s/i.test(value)) {
    throw usageError(
      `--header "${name}: …" carries a credential, and ${ARGV_IS_PUBLIC}; its value is not shown`,
      `put the value in a variable and name it: --header-env ${name}=VAR (e.g. export VAR="Bearer …")`,
    );
  }
  return [name, value];
}

/** `Name=VAR` → [name, the value of VAR]; an unset or empty variable is a usage error naming it. */
function headerFromEnv(text: string, env: NodeJS.ProcessEnv): [string, string] {
  const eq = text.indexOf('=');
  const name = eq === -1 ? '' : text.slice(0, eq).trim();
  const variable = eq === -1 ? '' : text.slice(eq + 1).trim();
  // The text is never quoted back: a mistaken `--header-env "Authorization: Bearer …"` holds the secret itself.
  if (!HEADER_NAME.test(name) || !VARIABLE_NAME.test(variable)) {
    throw usageError(
      '--header-env takes Name=VAR: a header name, then the name of the environment variable that holds its value (letters, digits and _)',
      'e.g. --header-env Authorization=MY_TOKEN with MY_TOKEN set to the header value',
    );
  }
  const value = Object.hasOwn(env, variable) ? env[variable] : undefined;
  if (value === undefined || value === '') {
    throw usageError(
      `--header-env ${name}=${variable}: the variable ${variable} is not set (or empty)`,
      `export ${variable}='<the value of ${name}>' in the environment that starts the bridge`,
    );
  }
  return [name, value];
}

/** The endpoint from `--url` (no credentials: userinfo or a credential-named query parameter) or `--url-env`. */
function endpoint(url: string | undefined, urlEnv: string | undefined, env: NodeJS.ProcessEnv): string {
  if (url !== undefined && urlEnv !== undefined) throw usageError('--url and --url-env cannot be given together');
  let text: string;
  if (urlEnv !== undefined) {
    // Never quoted back unless it is a variable name: a URL given here by mistake may carry its key.
    if (!VARIABLE_NAME.test(urlEnv)) {
      throw usageError(
        '--url-env takes the name of an environment variable (letters, digits and _), not a URL',
        'e.g. --url-env MCP_URL with MCP_URL set to the endpoint',
      );
    }
    const value = Object.hasOwn(env, urlEnv) ? env[urlEnv] : undefined;
    if (value === undefined || value.trim() === '') {
      throw usageError(
        `--url-env ${urlEnv}: the variable ${urlEnv} is not set (or empty)`,
        `export ${urlEnv}='https://host/mcp?…' in the environment that starts the bridge`,
      );
    }
    text = value.trim();
  } else {
    text = required(url, '--url', 'the Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp (or --url-env VAR)');
  }
  const flag = urlEnv === undefined ? '--url' : `--url-env ${urlEnv}`;
  let parsed: URL;
  try {
    parsed = new URL(text);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw usageError(`${flag} takes an http(s) URL, not "${redactUrl(text)}"`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Never repeated: the message would show the password.
    throw usageError(
      `${flag} must not carry a user name or password (user:password@)`,
      'send credentials as a header from a variable: --header-env Authorization=VAR (VAR holding "Basic …" or "Bearer …")',
    );
  }
  if (urlEnv === undefined) {
    const secret = [...parsed.searchParams.keys()].find((name) => isSecretName(name));
    if (secret !== undefined) {
      throw usageError(
        `--url carries a credential in its query (${secret}=…), and ${ARGV_IS_PUBLIC}; its value is not shown`,
        'give the URL in a variable instead: --url-env VAR, or send the credential as a header with --header-env Name=VAR',
      );
    }
  }
  return text;
}

export async function bridgeCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'http-to-stdio') {
    throw usageError(
      sub === undefined ? 'bridge needs a subcommand' : `unknown subcommand "bridge ${sub}"`,
      'use `bridge http-to-stdio --url U`',
    );
  }
  const { values, positionals } = parseCommand(command('bridge http-to-stdio'), rest);
  if (positionals.length > 0) throw usageError('bridge http-to-stdio takes no positional arguments');
  const url = endpoint(values.url, values['url-env'], process.env);
  const headers: Record<string, string> = {};
  const given = [
    ...(values.header ?? []).map(parseHeader),
    ...(values['header-env'] ?? []).map((text) => headerFromEnv(text, process.env)),
  ];
  for (const [name, value] of given) {
    // Defined, not assigned: a header named `__proto__` would otherwise be dropped.
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  }
  if ((values['data-dir'] === undefined) !== (values.project === undefined)) {
    throw usageError('--data-dir and --project go together', 'give both to use the stored sign-in, or neither');
  }
  const signIn =
    values.project === undefined || values['data-dir'] === undefined
      ? undefined
      : storedSignIn({ dataDir: values['data-dir'], project: values.project, url });
  const timeoutMs = values['timeout-ms'];
  const connectTimeoutMs = values['connect-timeout-ms'];
  // fd 1 carries the protocol only, from the first moment: everything else the process prints goes to stderr.
  const { protocolOutput } = protectStdout();
  const stop = untilSignal();
  try {
    const bridge = await httpToStdio({
      url,
      headers,
      ...(signIn === undefined ? {} : { signIn }),
      output: protocolOutput,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      ...(connectTimeoutMs === undefined ? {} : { connectTimeoutMs }),
      onError: (error) => io.stderr(`bridge: ${error.message}\n`),
    });
    try {
      io.stderr(
        `bridging stdio to ${redactUrl(url)} (${bridge.remoteProtocolVersion ?? 'unknown protocol version'})\n`,
      );
      await Promise.race([bridge.closed, stop.wait()]);
    } finally {
      await bridge.close();
    }
    return EXIT.ok;
  } finally {
    stop.dispose();
  }
}
