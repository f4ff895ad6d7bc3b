import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import { serve } from "@hono/node-server";

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };

export type RequestOptions = {
  body?: unknown;
  headers?: Record<string, string>;
  /** Sends `If-Match: "<revision>"`. */
  revision?: number;
  /** Idempotency-Key to send; `false` sends none; default a fresh UUID on mutations. */
  idempotencyKey?: string | false;
};

export type Client = {
  key: string;
  request(method: string, path: string, opts?: RequestOptions): Promise<Response>;
  get(path: string, opts?: RequestOptions): Promise<Response>;
  post(path: string, body?: unknown, opts?: RequestOptions): Promise<Response>;
  patch(path: string, body: unknown, opts?: RequestOptions): Promise<Response>;
  put(path: string, body: unknown, opts?: RequestOptions): Promise<Response>;
  delete(path: string, opts?: RequestOptions): Promise<Response>;
};

/** A bearer-authenticated client of the in-process app (`app.request`, no sockets). */
export function client(app: AppLike, key: string): Client {
  const request = async (method: string, path: string, opts: RequestOptions = {}) => {
    const headers: Record<string, string> = { authorization: `Bearer ${key}`, ...opts.headers };
    if (opts.body !== undefined) headers["content-type"] ??= "application/json";
    if (method !== "GET" && opts.idempotencyKey !== false) {
      headers["idempotency-key"] ??= opts.idempotencyKey || randomUUID();
    }
    if (opts.revision !== undefined) headers["if-match"] = `"${opts.revision}"`;
    const body =
      opts.body === undefined
        ? undefined
        : typeof opts.body === "string"
          ? opts.body
          : JSON.stringify(opts.body);
    return app.request(`/api/v1${path}`, { method, headers, body });
  };
  return {
    key,
    request,
    get: (path, opts) => request("GET", path, opts),
    post: (path, body, opts) => request("POST", path, { ...opts, body }),
    patch: (path, body, opts) => request("PATCH", path, { ...opts, body }),
    put: (path, body, opts) => request("PUT", path, { ...opts, body }),
    delete: (path, opts) => request("DELETE", path, opts),
  };
}

/** Asserts a problem+json body and returns it. */
export async function problem(
  res: Response,
): Promise<{ code: string; status: number; detail: string; [k: string]: unknown }> {
  if (!res.headers.get("content-type")?.startsWith("application/problem+json")) {
    throw new Error(
      `expected problem+json, got ${res.status} ${res.headers.get("content-type")}: ${await res.text()}`,
    );
  }
  return (await res.json()) as { code: string; status: number; detail: string };
}

/** The app on a real loopback port, for clients that need a URL (exporters, raw sockets). */
export async function listen(app: {
  fetch: (request: Request) => Response | Promise<Response>;
}): Promise<{ url: string; port: number; close(): Promise<void> }> {
  const server = await new Promise<ReturnType<typeof serve>>((resolve) => {
    const s = serve({ fetch: app.fetch, port: 0, hostname: "127.0.0.1" }, () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
