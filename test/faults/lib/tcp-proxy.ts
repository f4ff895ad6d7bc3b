import net from "node:net";

/**
 * A TCP proxy between the instances and PostgreSQL that the fault suite controls: it can cut
 * every connection at once (a network failure or a firewall reset, seen by both ends as a reset)
 * and delay every chunk in both directions (a slow network), order preserved.
 */
export type TcpProxy = {
  port: number;
  /** Open client connections right now. */
  readonly connections: number;
  /** Resets every open connection; new ones are accepted as before. */
  cutAll(): void;
  /** Delays each chunk by `ms` in each direction (0: none). */
  setLatency(ms: number): void;
  close(): Promise<void>;
};

export async function startTcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const open = new Set<{ client: net.Socket; upstream: net.Socket }>();
  let latencyMs = 0;

  /** Forwards `from` → `to`, each chunk after the current latency, never overtaking an earlier one. */
  const pipe = (from: net.Socket, to: net.Socket) => {
    let due = 0;
    from.on("data", (chunk) => {
      if (latencyMs === 0 && due <= Date.now()) {
        to.write(chunk);
        return;
      }
      due = Math.max(Date.now() + latencyMs, due);
      setTimeout(() => to.writable && to.write(chunk), due - Date.now());
    });
    from.on("end", () => setTimeout(() => to.end(), Math.max(0, due - Date.now())));
  };

  const server = net.createServer((client) => {
    const upstream = net.connect({ ...target, noDelay: true });
    client.setNoDelay(true);
    const pair = { client, upstream };
    open.add(pair);
    const drop = () => {
      open.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", drop).on("close", drop);
    upstream.on("error", drop).on("close", drop);
    pipe(client, upstream);
    pipe(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("the proxy has no address");
  const cutAll = () => {
    for (const { client, upstream } of [...open]) {
      client.resetAndDestroy();
      upstream.resetAndDestroy();
    }
    open.clear();
  };
  return {
    port: address.port,
    get connections() {
      return open.size;
    },
    cutAll,
    setLatency(ms) {
      latencyMs = ms;
    },
    close() {
      cutAll();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
