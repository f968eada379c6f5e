/**
 * `scienceevolve auth login|status|logout`: signing in to a project's remote services (OAuth 2.1). Login
 * prints the authorization URL on stderr and opens it (`BROWSER`, else xdg-open), takes the redirect on a
 * loopback port and stores the tokens in the data dir (0600); status and `--json` show what is held and when
 * it expires, never a value.
 */
import { authLogin, authLogout, authStatus, type SignInStatus } from '@scienceevolve/sdk/auth';
import { parseCommand, required } from '../args.js';
import { command } from '../optionTable.js';
import { EXIT, type Io, printJson, usageError } from '../output.js';

const DATA_DIR_WHAT = 'the directory that holds all ScienceEvolve state';

export async function authCommand(argv: string[], io: Io): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'login') return login(rest, io);
  if (sub === 'status') return status(rest, io);
  if (sub === 'logout') return logout(rest, io);
  throw usageError(
    sub === undefined ? 'auth needs a subcommand' : `unknown subcommand "auth ${sub}"`,
    'use `auth login`, `auth status` or `auth logout`',
  );
}

async function login(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('auth login'), argv);
  if (positionals.length > 0) throw usageError('auth login takes no positional arguments');
  const held = await authLogin({
    dataDir: required(values['data-dir'], '--data-dir', DATA_DIR_WHAT),
    project: required(values.project, '--project', 'the project whose workflow names the service'),
    service: required(values.service, '--service', 'the remote service to sign in to'),
    print: (line) => io.stderr(`${line}\n`),
    ...(values.port === undefined ? {} : { port: values.port }),
    ...(values['timeout-ms'] === undefined ? {} : { timeoutMs: values['timeout-ms'] }),
  });
  if (values.json) printJson(io, held);
  else io.stdout(`signed in: ${line(held)}\n`);
  return EXIT.ok;
}

async function status(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('auth status'), argv);
  if (positionals.length > 0) throw usageError('auth status takes no positional arguments');
  const held = await authStatus({
    dataDir: required(values['data-dir'], '--data-dir', DATA_DIR_WHAT),
    project: required(values.project, '--project', 'the project whose sign-ins to show'),
  });
  if (values.json) printJson(io, { signIns: held });
  else if (held.length === 0) io.stdout('no sign-ins held\n');
  else for (const s of held) io.stdout(`${line(s)}\n`);
  return EXIT.ok;
}

async function logout(argv: string[], io: Io): Promise<number> {
  const { values, positionals } = parseCommand(command('auth logout'), argv);
  if (positionals.length > 0) throw usageError('auth logout takes no positional arguments');
  const result = await authLogout({
    dataDir: required(values['data-dir'], '--data-dir', DATA_DIR_WHAT),
    project: required(values.project, '--project', 'the project whose workflow names the service'),
    service: required(values.service, '--service', 'the remote service to sign out of'),
  });
  if (values.json) printJson(io, result);
  else
    io.stdout(
      !result.removed
        ? `no sign-in was held for ${result.service}\n`
        : `signed out of ${result.service}${result.revoked ? ' (revoked at the authorization server)' : ' (the server offers no revocation, or refused it; tokens removed here)'}\n`,
    );
  return EXIT.ok;
}

function line(s: SignInStatus): string {
  const who = s.services.length > 0 ? s.services.join(', ') : '(no entry of the accepted workflow)';
  const state = !s.signedIn
    ? 'not signed in'
    : `signed in${s.expiresAt === undefined ? '' : `, expires ${s.expiresAt}`}${s.refreshable ? ', refreshable' : ''}`;
  return `${who}: ${s.resource} — ${state}${s.issuer === undefined ? '' : ` (issuer ${s.issuer})`}${s.scope === undefined ? '' : ` scope "${s.scope}"`}`;
}
