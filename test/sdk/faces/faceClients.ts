/**
 * Helpers of the list-change and progress tests: a surface served on every face (stdio in process over
 * a pair of streams, HTTP on 127.0.0.1, the Unix socket), each with an official v2 client connected, their
 * cleanup registered at once.
 */
import { connect } from 'node:net';
import { PassThrough } from 'node:stream';
import type { TestContext } from 'node:test';
import { Client, type ClientOptions, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createBridgeToken, serveHttp } from '../../../packages/sdk/src/faces/httpFace.js';
import { LineTransport } from '../../../packages/sdk/src/faces/lineTransport.js';
import { startSocketFace } from '../../../packages/sdk/src/faces/socketFace.js';
import { serveStdio } from '../../../packages/sdk/src/faces/stdioFace.js';
import type { Surface } from '../../../packages/sdk/src/surface/surface.js';

/** The faces and eras a test drives. */
export type FaceKind =
  | 'stdio 2025-11-25'
  | 'stdio 2026-07-28'
  | 'http 2025-11-25'
  | 'http 2026-07-28'
  | 'socket 2025-11-25';

/** The face kinds that hear list changes, in the order the tests drive them (2025-era HTTP on its GET stream). */
export const FACE_KINDS: readonly FaceKind[] = [
  'stdio 2025-11-25',
  'stdio 2026-07-28',
  'http 2025-11-25',
  'http 2026-07-28',
  'socket 2025-11-25',
];

function clientOptions(kind: FaceKind, options: Omit<ClientOptions, 'versionNegotiation'>): ClientOptions {
  const mode = kind.endsWith('2025-11-25') ? ('legacy' as const) : { pin: '2026-07-28' as const };
  return { ...options, versionNegotiation: { mode } };
}

/** Serves `surface` on the face `kind` names and connects a v2 client with `options` to it. */
export async function faceClient(
  t: TestContext,
  surface: Surface,
  kind: FaceKind,
  options: Omit<ClientOptions, 'versionNegotiation'> = {},
): Promise<Client> {
  const client = new Client({ name: `face-test ${kind}`, version: '1.0.0' }, clientOptions(kind, options));
  if (kind.startsWith('stdio')) {
    const toFace = new PassThrough();
    const fromFace = new PassThrough();
    const face = serveStdio(surface, { input: toFace, output: fromFace });
    t.after(() => face.close());
    await client.connect(new LineTransport(fromFace, toFace));
  } else if (kind.startsWith('http')) {
    const token = createBridgeToken();
    const face = await serveHttp(surface, { token });
    t.after(() => face.close());
    await client.connect(
      new StreamableHTTPClientTransport(new URL(face.url), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
  } else {
    const face = await startSocketFace(surface);
    t.after(() => face.close());
    const socket = connect(face.socketPath);
    await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
    t.after(() => socket.destroy());
    await client.connect(new LineTransport(socket, socket));
  }
  t.after(() => client.close());
  return client;
}
