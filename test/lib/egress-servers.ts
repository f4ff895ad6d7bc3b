// Test support only (imported by *.test.ts beside it): real loopback HTTPS servers behind a
// throwaway CA, so egress tests exercise real TLS, sockets and timeouts without internet.
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { createServer as createTcpServer, type Socket } from "node:net";
import { generate } from "selfsigned";
import { type EgressPolicy, strictEgressPolicy } from "../../src/platform/egress/address-policy.ts";

export type TestCa = { cert: string; serverKey: string; serverCert: string };

/** A CA and one server certificate for 127.0.0.1, ::1 and every *.example.com name. */
export async function makeTestCa(): Promise<TestCa> {
  const ca = await generate([{ name: "commonName", value: "patchbay egress test CA" }], {
    keyType: "ec",
    algorithm: "sha256",
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  const server = await generate([{ name: "commonName", value: "mcp.example.com" }], {
    keyType: "ec",
    algorithm: "sha256",
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: "basicConstraints", cA: false },
      { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
      { name: "extKeyUsage", serverAuth: true },
      {
        name: "subjectAltName",
        altNames: [
          { type: 2, value: "*.example.com" },
          { type: 7, ip: "127.0.0.1" },
          { type: 7, ip: "::1" },
        ],
      },
    ],
  });
  return { cert: ca.cert, serverKey: server.private, serverCert: server.cert };
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

export type TestServer = {
  port: number;
  /** https://127.0.0.1:<port> */
  origin: string;
  /** Requests received, in order (method, path, headers, body). */
  received: { method: string; path: string; headers: IncomingMessage["headers"]; body: string }[];
  close(): Promise<void>;
};

export async function startHttpsServer(ca: TestCa, handler: Handler): Promise<TestServer> {
  const received: TestServer["received"] = [];
  const sockets = new Set<Socket>();
  const server = createHttpsServer({ key: ca.serverKey, cert: ca.serverCert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      received.push({
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      handler(req, res);
    });
  });
  server.on("secureConnection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    origin: `https://127.0.0.1:${port}`,
    received,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Accepts TCP and never speaks TLS: the handshake hangs until the connect timeout. */
export async function startSilentTcpServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** What PATCHBAY_EGRESS_* produce for a loopback test server (see address-policy.ts). */
export function devPolicy(ca: TestCa, ports: number[], overrides: Partial<EgressPolicy> = {}): EgressPolicy {
  const strict = strictEgressPolicy();
  return {
    ...strict,
    allowCidrs: ["127.0.0.0/8", "::1/128"],
    allowPorts: [...strict.allowPorts, ...ports],
    extraCa: ca.cert,
    ...overrides,
  };
}

/**
 * An origin where a connection is refused, and stays refused for the test's length. Closing a
 * server and dialling its port is not enough: with test files running in parallel the kernel may
 * hand the port to another test's server meanwhile (seen in CI: a TLS error instead of a refusal,
 * and a stray request to someone else's server). So the port is held by a listener on 127.0.0.2
 * — which also keeps any wildcard listener off it — and the origin dials 127.0.0.3, where nothing
 * listens. (Linux routes all of 127/8 to loopback; macOS would need 127.0.0.2 configured.)
 */
export async function refusedOrigin(): Promise<{ origin: string; port: number; close(): Promise<void> }> {
  const holder = createTcpServer();
  await new Promise<void>((resolve, reject) => {
    holder.once("error", reject);
    holder.listen(0, "127.0.0.2", resolve);
  });
  const { port } = holder.address() as AddressInfo;
  return {
    origin: `https://127.0.0.3:${port}`,
    port,
    close: () => new Promise<void>((resolve) => holder.close(() => resolve())),
  };
}
