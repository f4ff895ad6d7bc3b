import type { IncomingHttpHeaders, IncomingMessage, RequestOptions } from "node:http";

/** An answer read whole: what the CLI's requests need of it. */
export type Exchanged = { status: number; headers: IncomingHttpHeaders; text: string };

/**
 * One HTTP request with Node's own `http`/`https` modules, its answer read as text. The CLI sends
 * its API requests this way rather than with `fetch`: loading fetch (undici) costs a command
 * ~30 ms, a third of a typical command's run (docs/performance.md, "Start-up"). Redirects are
 * not followed (the credential is never replayed to wherever one points). Failures reject as
 * `fetch` does: a `TimeoutError` DOMException after `timeoutMs`, otherwise an error whose
 * `cause` is the socket's.
 */
export async function exchange(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; timeoutMs: number },
): Promise<Exchanged> {
  // `process.getBuiltinModule`, not `import()`: importing `node:http` as ESM builds a facade that
  // reads every export, and one of them (http.WebSocket) loads undici: ~28 ms of a command.
  const { request } = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
  const body = init.body === undefined ? undefined : Buffer.from(init.body);
  const options: RequestOptions = {
    method: init.method,
    headers: body ? { ...init.headers, "content-length": String(body.byteLength) } : init.headers,
  };
  return new Promise<Exchanged>((resolve, reject) => {
    const req = request(url, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.on("error", fail);
      res.on("end", () => {
        clearTimeout(timer);
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text: Buffer.concat(chunks).toString("utf8"),
        });
      });
    });
    const timer = setTimeout(() => {
      req.destroy();
      reject(new DOMException(`no answer within ${init.timeoutMs} ms`, "TimeoutError"));
    }, init.timeoutMs);
    function fail(error: Error) {
      clearTimeout(timer);
      reject(new Error("request failed", { cause: error }));
    }
    req.on("error", fail);
    req.end(body);
  });
}
