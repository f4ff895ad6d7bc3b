import net from "node:net";

/** What postgres.js hands its `socket` option: its parsed connection options. */
type SocketOptions = { host: string[]; port: number[]; path?: string | false; connect_timeout?: number };

/**
 * postgres.js connects with Nagle's algorithm on. Ordinary queries go out as one write and do not
 * notice, but `COPY … FROM STDIN` sends its data and its end as separate writes, and the small end
 * message then waited for the server's delayed ACK: ~40 ms per COPY, which capped telemetry
 * ingest at a fraction of what PostgreSQL can take. This socket factory (postgres.js's `socket`
 * option) connects with TCP_NODELAY, trying each host of a multi-host URL in order as postgres.js
 * itself would, within `connect_timeout`. Unix-domain sockets are used as they are.
 */
export function noDelaySocket(options: SocketOptions): Promise<net.Socket> {
  const timeoutMs = (options.connect_timeout ?? 30) * 1000;
  if (options.path) return connect({ path: options.path }, timeoutMs);
  const attempt = async (index: number): Promise<net.Socket> => {
    const host = options.host[index] ?? "localhost";
    const port = options.port[index] ?? options.port[0] ?? 5432;
    try {
      const socket = await connect({ host, port }, timeoutMs);
      socket.setNoDelay(true);
      return socket;
    } catch (error) {
      if (index + 1 < options.host.length) return attempt(index + 1);
      throw error;
    }
  };
  return attempt(0);
}

function connect(target: net.NetConnectOpts, timeoutMs: number): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(target);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`connecting to PostgreSQL timed out after ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeListener("error", onError);
      resolve(socket);
    });
    const onError = (error: Error) => {
      clearTimeout(timer);
      reject(error);
    };
    socket.once("error", onError);
  });
}
