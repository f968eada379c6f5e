/**
 * The stdio relay an agent CLI launches as its MCP server: `node relay.js <socket>`. It connects to the
 * invocation's socket face (see `socketFace.ts`) and copies bytes both ways — stdin to the socket, the
 * socket to stdout — and exits when either side closes. It imports nothing but `node:net`, so it starts
 * and answers `initialize` in tens of milliseconds: Codex offers its first model request only the tools of
 * MCP servers that are ready within about a second, and silently drops the rest.
 *
 * Exit codes: 0 when the CLI closed stdin or the face closed the connection; 1 when the socket cannot be
 * reached (the message on stderr names it) or no socket path was given.
 */
import { connect } from 'node:net';

const socketPath = process.argv[2];
if (socketPath === undefined || socketPath === '') {
  process.stderr.write('scienceevolve relay: usage: node relay.js <socket path>\n');
  process.exit(1);
}

let connected = false;
const socket = connect(socketPath);

socket.on('connect', () => {
  connected = true;
});
socket.on('error', (error: NodeJS.ErrnoException) => {
  const what = connected ? 'lost the connection to' : 'cannot connect to';
  process.stderr.write(
    `scienceevolve relay: ${what} the invocation's surface at ${socketPath} (${error.code ?? error.message}); the invocation has probably ended\n`,
  );
  process.exit(1);
});
// The face closed the connection (the invocation ended): nothing more can be answered.
socket.on('close', () => process.exit(0));

process.stdin.pipe(socket);
socket.pipe(process.stdout);
// The CLI closed our stdin: half-close the socket so the face ends its session, then leave. The face
// closes its side in answer, which fires 'close' above; the timer only bounds a face that does not.
process.stdin.on('end', () => {
  setTimeout(() => process.exit(0), 1000).unref();
});
// stdout is a pipe the CLI reads; when the CLI is gone, writing fails with EPIPE: that is our end too.
process.stdout.on('error', () => process.exit(0));
