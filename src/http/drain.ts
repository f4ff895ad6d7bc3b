import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";

/**
 * Stops an HTTP server without dropping requests that raced the stop. `http.Server#close`
 * also closes idle connections at once, and a connection accepted a moment earlier whose
 * request has not been parsed yet counts as idle: its client would see a reset. So: stop
 * listening only, answer everything from now on with `Connection: close`, give connections
 * already accepted `settleMs` to deliver their requests, then close what is still idle, and
 * wait (at most `timeoutMs`) for in-flight responses to finish.
 */
export async function drainServer(
  server: Server,
  opts: { settleMs: number; timeoutMs: number },
): Promise<void> {
  server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    if (!res.headersSent) res.setHeader("connection", "close");
  });
  const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, opts.timeoutMs).unref());
  await Promise.race([new Promise<void>((resolve) => setTimeout(resolve, opts.settleMs).unref()), closed]);
  server.closeIdleConnections();
  await Promise.race([closed, deadline]);
}
