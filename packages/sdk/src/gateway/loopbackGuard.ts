/**
 * Loaded into supergateway with `node --import` by `gateway`: supergateway 4 listens on every interface
 * and checks neither `Host` nor `Origin`, and has no option for either. This module, evaluated before
 * supergateway's own code, makes every server of that process listen on 127.0.0.1 when no host was
 * given, and answers 403 to an HTTP request whose `Host` or `Origin` fails the rule of the SDK's own
 * HTTP face (`loopbackRule.ts`, one function for both: the DNS rebinding defence). It touches nothing but the process that imports it: the
 * stdio server supergateway launches does not inherit it (it is not in `NODE_OPTIONS`).
 */
import http from 'node:http';
import net from 'node:net';
import { loopbackHostAllowed, loopbackOriginAllowed } from '../faces/loopbackRule.js';

const originalListen = net.Server.prototype.listen;
net.Server.prototype.listen = function listen(this: net.Server, ...args: unknown[]) {
  const [first] = args;
  const wildcard = (host: unknown) =>
    host === undefined || host === null || host === '' || host === '0.0.0.0' || host === '::';
  if (args.length === 0 || first === undefined || first === null || typeof first === 'function') {
    // listen() or listen(callback): an ephemeral port on every interface, made loopback.
    args.splice(0, first === undefined || first === null ? 1 : 0, 0, '127.0.0.1');
  } else if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, callback]): insert the host, or replace a wildcard one.
    if (typeof args[1] === 'string') {
      if (wildcard(args[1])) args[1] = '127.0.0.1';
    } else {
      args.splice(1, 0, '127.0.0.1');
    }
  } else if (typeof first === 'object' && !('path' in first) && wildcard((first as { host?: unknown }).host)) {
    args[0] = { ...(first as object), host: '127.0.0.1' };
  }
  return (originalListen as (...a: unknown[]) => net.Server).apply(this, args);
} as typeof net.Server.prototype.listen;

const originalEmit = http.Server.prototype.emit;
http.Server.prototype.emit = function emit(this: http.Server, event: string | symbol, ...args: unknown[]) {
  if (event === 'request') {
    const [req, res] = args as [http.IncomingMessage, http.ServerResponse];
    // The HTTP face's rule, to the letter (loopbackRule.ts): the port is the one this request came in on.
    if (
      !loopbackHostAllowed(req.headers.host, req.socket.localPort ?? 0) ||
      !loopbackOriginAllowed(req.headers.origin)
    ) {
      res
        .writeHead(403, { 'content-type': 'text/plain', connection: 'close' })
        .end('forbidden: not a loopback Host or Origin\n');
      return true;
    }
  }
  return (originalEmit as (...a: unknown[]) => boolean).call(this, event, ...args);
} as typeof http.Server.prototype.emit;
