import { IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from "node:http";
import { Socket } from "node:net";
import { Writable } from "node:stream";

/**
 * oidc-provider is a Koa application wanting Node's `(req, res)`; Hono has a web `Request` and
 * wants a `Response` (in `app.request()` tests there is no socket at all). This bridges the two in
 * memory, with the body buffered (OAuth bodies are small; the provider refuses over 56 KiB).
 */
type NodeRequestInit = {
  method: string;
  /** Path and query, e.g. `/oauth/token?x=1`. */
  url: string;
  headers: Headers;
  body?: Uint8Array | undefined;
  /** The public base URL's path prefix: the provider builds its URLs from `originalUrl`. */
  mountPath?: string;
  /** Values attached to `req` under symbols (e.g. the Hono context, for page renderers). */
  attachments?: ReadonlyMap<symbol, unknown>;
};

/** A Node `IncomingMessage` carrying the given method, URL, headers and body, with no socket behind it. */
export function nodeRequest(init: NodeRequestInit): IncomingMessage {
  const req = new IncomingMessage(new Socket());
  req.method = init.method;
  req.url = init.url;
  if (init.mountPath)
    (req as IncomingMessage & { originalUrl?: string }).originalUrl = `${init.mountPath}${init.url}`;
  req.httpVersion = "1.1";
  req.httpVersionMajor = 1;
  req.httpVersionMinor = 1;
  const headers: Record<string, string> = {};
  const rawHeaders: string[] = [];
  init.headers.forEach((value, name) => {
    headers[name] = value;
    rawHeaders.push(name, value);
  });
  const body = init.body && init.body.byteLength > 0 ? Buffer.from(init.body) : undefined;
  if (body) {
    headers["content-length"] = String(body.byteLength);
    delete headers["transfer-encoding"];
  }
  req.headers = headers;
  req.rawHeaders = rawHeaders;
  for (const [key, value] of init.attachments ?? []) Object.defineProperty(req, key, { value });
  if (body) req.push(body);
  req.push(null);
  req.complete = true;
  return req;
}

/** The part of `http.ServerResponse` Koa and oidc-provider use, in memory; `response()` once ended. */
export class MemoryResponse extends Writable {
  statusCode = 200;
  statusMessage = "";
  headersSent = false;
  /** Koa asks for the socket only to know whether it can still write. */
  readonly socket = null;
  readonly #headers = new Map<string, OutgoingHttpHeader>();
  readonly #chunks: Buffer[] = [];
  readonly #done: Promise<void>;

  constructor() {
    super();
    this.#done = new Promise((resolve, reject) => {
      this.once("finish", resolve);
      this.once("error", reject);
    });
  }

  get finished(): boolean {
    return this.writableEnded;
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    this.#headers.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.#headers.get(name.toLowerCase());
  }

  getHeaders(): OutgoingHttpHeaders {
    return Object.fromEntries(this.#headers);
  }

  getHeaderNames(): string[] {
    return [...this.#headers.keys()];
  }

  hasHeader(name: string): boolean {
    return this.#headers.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.#headers.delete(name.toLowerCase());
  }

  writeHead(status: number, headers?: OutgoingHttpHeaders): this {
    this.statusCode = status;
    for (const [name, value] of Object.entries(headers ?? {})) {
      if (value !== undefined) this.setHeader(name, value);
    }
    this.headersSent = true;
    return this;
  }

  flushHeaders(): void {
    this.headersSent = true;
  }

  override _write(
    chunk: Buffer | string,
    encoding: BufferEncoding,
    callback: (error?: Error | null) => void,
  ) {
    this.headersSent = true;
    this.#chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : chunk);
    callback();
  }

  override _final(callback: (error?: Error | null) => void) {
    this.headersSent = true;
    callback();
  }

  /** The finished response. Bodiless statuses get no body, as `Response` requires. */
  async response(): Promise<Response> {
    await this.#done;
    const headers = new Headers();
    for (const [name, value] of this.#headers) {
      if (name === "content-length" || name === "transfer-encoding" || name === "connection") continue;
      for (const one of Array.isArray(value) ? value : [value]) headers.append(name, String(one));
    }
    const bodiless = this.statusCode === 204 || this.statusCode === 304 || this.statusCode < 200;
    const body = bodiless ? null : Buffer.concat(this.#chunks);
    return new Response(body, { status: this.statusCode, headers });
  }
}

type NodeHandler = (req: IncomingMessage, res: MemoryResponse) => unknown;

/** A handler that never ends its response would hold the request forever; this bounds it. */
const ANSWER_TIMEOUT_MS = 30_000;

/** Runs a Node `(req, res)` handler on an in-memory request and returns what it answered. */
export async function runNodeHandler(handler: NodeHandler, init: NodeRequestInit): Promise<Response> {
  const req = nodeRequest(init);
  const res = new MemoryResponse();
  const answered = res.response();
  await handler(req, res);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error("the handler did not finish its response")), ANSWER_TIMEOUT_MS);
    timer.unref();
  });
  try {
    return await Promise.race([answered, timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
