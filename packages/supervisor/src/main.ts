/**
 * The supervisor process. A host starts it with `child_process.fork` (see the SDK's `SupervisorClient`):
 * detached in a session of its own, stdio ignored, one IPC channel. It records what the host tells it and,
 * when the channel closes, collects everything and exits.
 *
 * Why a session of its own: the host's terminal sends SIGINT/SIGHUP to the host's foreground process
 * group and session; a supervisor there would die with the host it is meant to outlive. `detached: true`
 * makes the child call setsid(), so no terminal signal reaches it and it has no controlling terminal.
 */
import { isHostMessage, type SupervisorMessage } from './protocol.js';
import { Supervisor } from './supervisor.js';

if (typeof process.send !== 'function') {
  // Started by hand: there is no host to watch, and the supervisor never writes to a terminal.
  process.exit(2);
}

process.title = 'scienceevolve-supervisor';

const supervisor = new Supervisor({
  send: (message: SupervisorMessage) => {
    if (!process.connected) return;
    // The callback swallows a send on a channel that closed meanwhile; 'disconnect' handles that case.
    process.send?.(message, undefined, undefined, () => {});
  },
});

process.on('message', (message: unknown) => {
  if (isHostMessage(message)) supervisor.handle(message);
  else supervisor.log(`ignored a malformed message: ${JSON.stringify(message)?.slice(0, 200)}`);
});

// The channel closes when the host exits for any reason, SIGKILL included: the kernel closes its end of
// the socket pair, and Node reports it here within milliseconds. The open channel is also what keeps this
// process alive until then.
process.on('disconnect', () => {
  supervisor.hostGone().then(
    () => process.exit(0),
    (error: unknown) => {
      supervisor.log(`collection failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      process.exit(1);
    },
  );
});

process.on('uncaughtException', (error) => {
  supervisor.log(`uncaught: ${error.stack ?? error.message}`);
  // The host notices the exit and starts a new supervisor with its whole state.
  process.exit(1);
});
