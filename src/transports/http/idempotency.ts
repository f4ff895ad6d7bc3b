import { createHash } from "node:crypto";
import type { Context, MiddlewareHandler } from "hono";
import { AppError } from "../../errors.ts";
import {
  claimIdempotencyKey,
  idempotencyKeyPattern,
  idempotencyScope,
  releasingOnThrow,
} from "../../platform/db/claim.ts";
import type { AppEnv } from "./env.ts";

/** Headers worth replaying; everything else is regenerated per response. */
const replayedHeaders = ["content-type", "etag", "location"];

/**
 * Idempotency-Key on REST (DESIGN §5), through the store MCP tools share (db/claim.ts):
 *
 * - same key + same request → the stored response, with `Idempotency-Replayed: true`;
 * - same key + a different request → 422 `idempotency_key_reused`;
 * - same key while the first is still running → wait for it, then replay; past the wait,
 *   409 `idempotency_in_flight`.
 *
 * Only 2xx responses are stored. A 4xx means nothing changed, so the key is released and the
 * caller may fix the request and retry with the same key; a 5xx may have been transient.
 * Must run after `authenticate` (it needs the organisation).
 */
export const idempotent = (): MiddlewareHandler<AppEnv> => async (c, next) => {
  const key = c.req.header("idempotency-key");
  if (key === undefined || key === "") {
    throw new AppError(
      "idempotency_key_required",
      "This request needs an Idempotency-Key header (any unique string, e.g. a UUID).",
    );
  }
  if (!idempotencyKeyPattern.test(key)) {
    throw new AppError("invalid_request", "Idempotency-Key must be 1–255 visible ASCII characters.", {
      header: "Idempotency-Key",
    });
  }
  const ctx = c.get("ctx");
  const requestHash = await hashRequest(c, ["if-match"]);
  const held = await claimIdempotencyKey(idempotencyScope(ctx, key), requestHash, ctx.deps.clock);
  if ("replay" in held) {
    const headers = new Headers(held.replay.headers);
    headers.set("idempotency-replayed", "true");
    return new Response(held.replay.body, { status: held.replay.status, headers });
  }

  c.set("ctx", { ...ctx, idempotencyKey: key });
  await releasingOnThrow(held.claim.release, next);
  const res = c.res;
  if (res.status < 200 || res.status >= 300) return held.claim.release();
  const headers = pickHeaders(res.headers, replayedHeaders);
  await held.claim.complete({ status: res.status, headers, body: await res.clone().text() });
};

/**
 * Method (HEAD as GET, which serves it), path, query, the named headers and the exact body
 * bytes: any difference is a different request, so a stored answer never goes to another one.
 */
export async function hashRequest(c: Context, headers: readonly string[] = []): Promise<string> {
  const url = new URL(c.req.url);
  const method = c.req.method === "HEAD" ? "GET" : c.req.method;
  const body = method === "GET" ? "" : await c.req.text();
  const lines = [method, `${url.pathname}${url.search}`, ...headers.map((name) => c.req.header(name) ?? "")];
  return createHash("sha256")
    .update(`${lines.join("\n")}\n`)
    .update(body)
    .digest("hex");
}

/** The named headers that `headers` holds, as a plain object to store. */
export function pickHeaders(headers: Headers, names: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = headers.get(name);
    if (value !== null) out[name] = value;
  }
  return out;
}
