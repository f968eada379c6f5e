/** `scienceevolve bridge http-to-stdio --url U [--header "K: V"]…`: a stdio MCP server forwarding to a Streamable HTTP one. */
import { httpToStdio, protectStdout, redactUrl } from '@scienceevolve/sdk';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, usageError } from '../output.js';
import { untilSignal } from '../signals.js';

/** `Name: value` → [name, value]; the name must be an HTTP token. */
function parseHeader(text: string): [string, string] {
  const colon = text.indexOf(':');
  const name = colon === -1 ? '' : text.slice(0, colon).trim();
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
    // Never quoted: the text may be the secret itself (a value given without its name).
    throw usageError(
      '--header takes "Name: value", an HTTP header name (letters, digits, -) before the colon; the text given is not shown',
    );
  }
  return [name, text.slice(colon + 1).trim()];
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
  const url = required(values.url, '--url', 'the Streamable HTTP endpoint, e.g. http://127.0.0.1:8000/mcp');
  let parsed: URL;
  try {
    parsed = new URL(url);
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw usageError(`--url takes an http(s) URL, not "${redactUrl(url)}"`);
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Never repeated: the message would show the password.
    throw usageError(
      '--url must not carry a user name or password (user:password@)',
      'send credentials as a header: --header "Authorization: Basic …" or "Authorization: Bearer …"',
    );
  }
  const headers: Record<string, string> = {};
  for (const text of values.header ?? []) {
    const [name, value] = parseHeader(text);
    // Defined, not assigned: a header named `__proto__` would otherwise be dropped.
    Object.defineProperty(headers, name, { value, enumerable: true, writable: true, configurable: true });
  }
  const timeoutMs = values['timeout-ms'];
  const connectTimeoutMs = values['connect-timeout-ms'];
  // fd 1 carries the protocol only, from the first moment: everything else the process prints goes to stderr.
  const { protocolOutput } = protectStdout();
  const stop = untilSignal();
  try {
    const bridge = await httpToStdio({
      url,
      headers,
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
