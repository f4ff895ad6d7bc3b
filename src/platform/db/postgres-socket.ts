import net from "node:net";

/** What postgres.js hands its `socket` option: its parsed connection options. */
type SocketOptions = { host: string[]; port: number[]; path?: string | false };

/**
 * The sockets postgres.js connects through (its `socket` option), for two reasons.
 *
 * TCP_NODELAY: postgres.js connects with Nagle's algorithm on. Ordinary queries go out as one
 * write and do not notice, but `COPY … FROM STDIN` sends its data and its end as separate writes,
 * and the small end message then waited for the server's delayed ACK: ~40 ms per COPY, which
 * capped telemetry ingest at a fraction of what PostgreSQL can take.
 *
 * Failing fast while the server is away: postgres.js retries the query that opened a connection
 * for as long as the connection keeps closing without an error. Behind anything that accepts
 * connections on the server's behalf (a pooler, a load balancer, a proxy) a stopped server looks
 * exactly like that, and every request then waited for the server's return. A connection that
 * ends before the server said a word is turned into a socket error here, which fails that query
 * (database_unavailable, 503) and leaves reconnecting to the next one.
 *
 * The socket is handed back at once, still connecting, and the factory never throws: postgres.js
 * attaches its `error` and `close` listeners before any I/O event can fire, so a refused, reset or
 * timed-out connection reaches it as an ordinary socket error (the first bytes it writes wait in
 * the socket until the connection is up; its `connect_timeout` still applies). A factory that
 * waited for the connection broke that: a rejection left the pool's slot in "connecting" for good
 * (every later query hung), and a socket that closed before the listeners were attached was
 * written to after postgres.js had dropped it (an uncaught TypeError that crashed the process). A
 * multi-host URL is tried host after host, one per connection attempt.
 */
export function postgresSocket(): (options: SocketOptions) => net.Socket {
  let attempt = 0;
  return (options) => {
    const socket = options.path
      ? net.connect({ path: options.path })
      : (() => {
          const index = attempt++ % Math.max(1, options.host.length);
          const host = options.host[index] ?? "localhost";
          const port = options.port[index] ?? options.port[0] ?? 5432;
          return net.connect({ host, port, noDelay: true });
        })();
    socket.once("end", () => {
      if (socket.bytesRead > 0) return;
      const error = new Error("the connection to PostgreSQL closed before the server answered");
      socket.destroy(Object.assign(error, { code: "ECONNRESET" }));
    });
    return socket;
  };
}

/**
 * Seconds before a pool connection tries again after failing to connect: postgres.js's own
 * backoff grows to 20 s, so after an outage of half a minute an instance took that long to notice
 * the server was back. Doubling from 50 ms to at most 1 s keeps recovery within a second while
 * costing the server a handful of refused connections per second per instance.
 */
export const reconnectBackoffSeconds = (retries: number): number => Math.min(0.05 * 2 ** retries, 1);
