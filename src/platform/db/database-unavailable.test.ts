import net from "node:net";
import { Hono } from "hono";
import postgres from "postgres";
import { afterEach, describe, expect, test } from "vitest";
import { AppError } from "../../errors.ts";
import type { AppEnv } from "../../transports/http/env.ts";
import { handleError } from "../../transports/http/problem.ts";
import { asKnownError, isDatabaseUnavailable } from "./errors.ts";
import { postgresSocket, reconnectBackoffSeconds } from "./postgres-socket.ts";

/**
 * What a request sees when PostgreSQL is away: real postgres.js clients, through the socket
 * factory the service uses, against loopback servers that stand where the database was.
 */

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((fn) => fn()));
});

/** A TCP server that accepts and then hangs up (`reset`: with an RST) without a word. */
async function hangUpServer(how: "end" | "reset"): Promise<number> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    if (how === "end") socket.end();
    else socket.resetAndDestroy();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(async () => {
    server.close();
    for (const socket of sockets) socket.destroy();
  });
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("no address");
  return address.port;
}

function client(port: number) {
  const options = {
    max: 1,
    connect_timeout: 3,
    backoff: reconnectBackoffSeconds,
    onnotice: () => {},
    socket: postgresSocket(),
  };
  const sql = postgres(`postgres://postgres@127.0.0.1:${port}/postgres`, options);
  cleanups.push(() => sql.end({ timeout: 0 }));
  return sql;
}

/** The query's rejection, and how long it took. */
async function failure(query: Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  try {
    await query;
  } catch (error) {
    return { error, ms: Date.now() - started };
  }
  throw new Error("the query succeeded against a server that is not PostgreSQL");
}

describe("the database away", () => {
  test("a server that accepts and closes without answering (a proxy in front of a stopped database) fails the query at once, as unavailable", async () => {
    const sql = client(await hangUpServer("end"));
    // postgres.js on its own retried this query for as long as the server stayed away.
    const { error, ms } = await failure(sql`select 1`);
    expect(isDatabaseUnavailable(error)).toBe(true);
    expect(ms).toBeLessThan(3_000);
    // The pool is not wedged: the next query fails the same way instead of hanging.
    expect(isDatabaseUnavailable((await failure(sql`select 2`)).error)).toBe(true);
  });

  test("a reset connection and a refused one are unavailable", async () => {
    expect(isDatabaseUnavailable((await failure(client(await hangUpServer("reset"))`select 1`)).error)).toBe(
      true,
    );
    const port = await hangUpServer("end");
    // A port nobody listens on: bind one, learn it, close it.
    const probe = net.createServer();
    await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
    const address = probe.address();
    const closedPort = typeof address === "object" && address ? address.port : port;
    await new Promise((resolve) => probe.close(resolve));
    expect(isDatabaseUnavailable((await failure(client(closedPort)`select 1`)).error)).toBe(true);
  });

  test("server-side shutdown codes and wrapped causes are unavailable; query errors are not", () => {
    expect(isDatabaseUnavailable(Object.assign(new Error("terminating"), { code: "57P01" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("starting up"), { code: "57P03" }))).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("lost"), { code: "08006" }))).toBe(true);
    const wrapped = new Error("Failed query: select 1", {
      cause: Object.assign(new Error("write CONNECTION_CLOSED"), { code: "CONNECTION_CLOSED" }),
    });
    expect(isDatabaseUnavailable(wrapped)).toBe(true);
    expect(
      isDatabaseUnavailable(new AggregateError([Object.assign(new Error("x"), { code: "ECONNREFUSED" })])),
    ).toBe(true);
    expect(isDatabaseUnavailable(Object.assign(new Error("duplicate"), { code: "23505" }))).toBe(false);
    expect(isDatabaseUnavailable(Object.assign(new Error("syntax"), { code: "42601" }))).toBe(false);
    expect(isDatabaseUnavailable(new TypeError("x is undefined"))).toBe(false);
    const own = new AppError("not_found", "No such thing.");
    expect(asKnownError(own)).toBe(own);
    expect(asKnownError(new TypeError("bug"))).toBeUndefined();
  });

  test("REST answers 503 database_unavailable with Retry-After, never a 500", async () => {
    const sql = client(await hangUpServer("end"));
    const app = new Hono<AppEnv>();
    app.onError(handleError);
    app.get("/thing", async (c) => c.json(await sql`select 1`));
    const res = await app.request("/thing");
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(res.headers.get("content-type")).toBe("application/problem+json");
    expect(await res.json()).toMatchObject({ code: "database_unavailable", status: 503 });
  });

  test("the reconnect backoff stays within a second", () => {
    expect(reconnectBackoffSeconds(0)).toBe(0.05);
    expect(reconnectBackoffSeconds(3)).toBe(0.4);
    expect(reconnectBackoffSeconds(50)).toBe(1);
  });
});
