// Test support: the loopback HTTPS front shared by the MCP test servers (mcp-servers.ts,
// mcp-everything.ts). Real TLS from the throwaway CA, a log of every request, credential
// checks, a redirect mode and a crash switch. The MCP handling itself is plugged in.
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import type { TestCa } from "./egress-servers.ts";

/** What the server accepts: anything else gets `rejectStatus` (401 unless set). */
export type TestAuth =
  | { kind: "none" }
  | { kind: "bearer"; token: string }
  | { kind: "api_key"; headerName: string; value: string };

export type RecordedRequest = {
  httpMethod: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** As received, so a test can count how often a header was sent. */
  rawHeaders: string[];
  /** From the JSON-RPC body (the first message of a batch). */
  rpcMethod?: string | undefined;
  /** `params.name` of a `tools/call`. */
  toolName?: string | undefined;
  /** `params.cursor` of a `tools/list`. */
  cursor?: string | undefined;
  /** The status answered; set once the response is finished. */
  status?: number | undefined;
  /** The response finished or its connection closed (e.g. the client dropped an SSE stream). */
  ended: boolean;
};

/** Answers one authorised request on the MCP path; `body` is the parsed JSON (POST) or undefined. */
export type McpHandler = (req: IncomingMessage, res: ServerResponse, body: unknown) => Promise<void>;

export type McpHttps = {
  port: number;
  /** https://127.0.0.1:<port> */
  origin: string;
  /** https://127.0.0.1:<port>/mcp */
  url: string;
  ca: TestCa;
  requests: RecordedRequest[];
  /** TLS connections accepted so far. */
  connections(): number;
  /** Count of requests whose JSON-RPC method is `method` (and tool name, for tools/call). */
  count(method: string, toolName?: string): number;
  setAuth(auth: TestAuth, rejectStatus?: 401 | 403): void;
  /** Answer every request with 307 to `location` (undefined: stop redirecting). */
  redirectTo(location: string | undefined): void;
  /** Crash: destroys every open socket (in-flight calls see a reset) and stops listening. */
  kill(): Promise<void>;
  close(): Promise<void>;
};

export const MCP_PATH = "/mcp";

export async function startMcpHttps(options: {
  ca: TestCa;
  auth?: TestAuth | undefined;
  rejectStatus?: 401 | 403 | undefined;
  handle: McpHandler;
  onClose?: () => Promise<void>;
}): Promise<McpHttps> {
  let auth: TestAuth = options.auth ?? { kind: "none" };
  let rejectStatus: 401 | 403 = options.rejectStatus ?? 401;
  let redirect: string | undefined;
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();

  // A handler that throws answers 500 (or cuts the stream if it had started answering).
  const serve: McpHandler = (req, res, body) =>
    options.handle(req, res, body).catch(() => {
      if (!res.headersSent) res.writeHead(500).end();
      else res.destroy();
    });

  const server = createServer({ key: options.ca.serverKey, cert: options.ca.serverCert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      const body = parseJson(text);
      const entry: RecordedRequest = {
        httpMethod: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawHeaders: req.rawHeaders,
        ...rpcSummary(body),
        ended: false,
      };
      requests.push(entry);
      res.on("finish", () => {
        entry.status = res.statusCode;
      });
      res.on("close", () => {
        entry.ended = true;
      });
      if (redirect !== undefined) {
        res.writeHead(307, { location: redirect }).end();
      } else if (req.url !== MCP_PATH) {
        res.writeHead(404).end();
      } else if (!authorized(auth, req.headers)) {
        const challenge = auth.kind === "bearer" ? { "www-authenticate": 'Bearer realm="test"' } : {};
        res
          .writeHead(rejectStatus, { "content-type": "application/json", ...challenge })
          .end('{"error":"unauthorized"}');
      } else if (text !== "" && body === undefined) {
        res
          .writeHead(400, { "content-type": "application/json" })
          .end('{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"},"id":null}');
      } else {
        serve(req, res, body);
      }
    });
  });

  let connections = 0;
  server.on("secureConnection", (socket: Socket) => {
    connections++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const origin = `https://127.0.0.1:${port}`;

  let closed: Promise<void> | undefined;
  const shutDown = () => {
    closed ??= (async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await options.onClose?.();
    })();
    return closed;
  };

  return {
    port,
    origin,
    url: `${origin}${MCP_PATH}`,
    ca: options.ca,
    requests,
    connections: () => connections,
    count: (method, toolName) =>
      requests.filter((r) => r.rpcMethod === method && (toolName === undefined || r.toolName === toolName))
        .length,
    setAuth: (next, status) => {
      auth = next;
      if (status) rejectStatus = status;
    },
    redirectTo: (location) => {
      redirect = location;
    },
    kill: shutDown,
    close: shutDown,
  };
}

function authorized(auth: TestAuth, headers: IncomingHttpHeaders): boolean {
  if (auth.kind === "none") return true;
  if (auth.kind === "bearer") return headers.authorization === `Bearer ${auth.token}`;
  return headers[auth.headerName.toLowerCase()] === auth.value;
}

function parseJson(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function rpcSummary(body: unknown): Pick<RecordedRequest, "rpcMethod" | "toolName" | "cursor"> {
  const message: unknown = Array.isArray(body) ? body[0] : body;
  if (!isRecord(message) || typeof message.method !== "string") return {};
  const params = isRecord(message.params) ? message.params : {};
  return {
    rpcMethod: message.method,
    toolName: message.method === "tools/call" && typeof params.name === "string" ? params.name : undefined,
    cursor: typeof params.cursor === "string" ? params.cursor : undefined,
  };
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
