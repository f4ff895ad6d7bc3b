import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { Server as NetServer } from "node:net";

export type Drain = (opts: { settleMs: number; timeoutMs: number }) => Promise<void>;

/**
 * Readies `server` to stop without dropping requests that raced the stop; call it once, as the
 * server starts, and the returned function on shutdown. `http.Server#close` also closes idle
 * connections at once, and a connection accepted a moment earlier whose request has not been
 * parsed yet counts as idle: its client would see a reset. So the drain stops listening only,
 * answers everything from then on with `Connection: close` — requests already running included,
 * which is why the responses in flight are tracked from the start (a Set entry per request) —
 * gives connections already accepted `settleMs` to deliver their requests, then closes what is
 * still idle, and waits (at most `timeoutMs`) for in-flight responses to finish.
 */
export function drainable(server: Server): Drain {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  // One shared listener, not a closure per request.
  function settled(this: ServerResponse) {
    inFlight.delete(this);
  }
  server.on("request", (_req: IncomingMessage, res: ServerResponse) => {
    // A response written synchronously by an earlier listener is already on its way.
    if (res.headersSent) return;
    if (draining) res.setHeader("connection", "close");
    inFlight.add(res);
    res.on("close", settled);
  });

  return async (opts) => {
    draining = true;
    for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
    const closed = new Promise<void>((resolve) => NetServer.prototype.close.call(server, () => resolve()));
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, opts.timeoutMs).unref());
    await Promise.race([new Promise<void>((resolve) => setTimeout(resolve, opts.settleMs).unref()), closed]);
    server.closeIdleConnections();
    await Promise.race([closed, deadline]);
  };
}
