import { randomFillSync } from "node:crypto";
import { ServerResponse } from "node:http";
import { Http2ServerResponse } from "node:http2";
import type { MiddlewareHandler } from "hono";
import { alphabet } from "../../ids.ts";
import type { AppEnv } from "./env.ts";

const acceptable = /^[A-Za-z0-9._:-]{1,128}$/;

/** 120 random bits per id, as 24 characters: the same shape `newId("req")` had. */
const ID_BYTES = 15;
/** One call into the CSPRNG per 273 ids instead of one per id (it was ~11 % of a fast request). */
const pool = Buffer.allocUnsafe(ID_BYTES * 273);
let offset = pool.length;

/**
 * `req_` + 24 random base32 characters. Request ids are not secrets, but they are echoed to
 * callers, so they stay random: a counter would tell anyone our request rate.
 */
export function newRequestId(): string {
  if (offset + ID_BYTES > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  let out = "req_";
  // 15 bytes = three 40-bit groups of 8 characters each; 40 bits fit a double exactly.
  for (let group = 0; group < 3; group++) {
    const hi = pool[offset++] ?? 0;
    const lo =
      ((pool[offset++] ?? 0) * 0x1000000 +
        ((pool[offset++] ?? 0) << 16) +
        ((pool[offset++] ?? 0) << 8) +
        (pool[offset++] ?? 0)) >>>
      0;
    let value = hi * 0x100000000 + lo;
    let chunk = "";
    for (let i = 0; i < 8; i++) {
      chunk = alphabet[value % 32] + chunk;
      value = Math.floor(value / 32);
    }
    out += chunk;
  }
  return out;
}

/**
 * Honours a caller's X-Request-Id when it is a plain token (it ends up in logs), else mints one.
 *
 * Under @hono/node-server the header goes onto Node's response before the handler runs: Node
 * merges it into whatever the handler's response writes, and the response keeps its plain
 * header object, which @hono/node-server writes without building a `Headers` (setting it on
 * `c.res.headers` afterwards forced one on every response). Elsewhere (`app.request` in tests)
 * it is set on the finished response.
 */
export const requestId = (): MiddlewareHandler<AppEnv> => (c, next) => {
  const inbound = c.req.header("x-request-id");
  const id = inbound && acceptable.test(inbound) ? inbound : newRequestId();
  c.set("requestId", id);
  const outgoing = nodeResponse(c.env);
  if (outgoing) {
    outgoing.setHeader("x-request-id", id);
    return next();
  }
  return next().then(() => {
    c.res.headers.set("x-request-id", id);
  });
};

/** The Node response @hono/node-server passes as the request's bindings, if it is one. */
function nodeResponse(env: unknown): ServerResponse | Http2ServerResponse | undefined {
  if (typeof env !== "object" || env === null || !("outgoing" in env)) return undefined;
  const outgoing = env.outgoing;
  return outgoing instanceof ServerResponse || outgoing instanceof Http2ServerResponse ? outgoing : undefined;
}
