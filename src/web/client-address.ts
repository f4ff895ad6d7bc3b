import { getConnInfo } from "@hono/node-server/conninfo";
import type { Context } from "hono";

/**
 * The peer's address, for the sign-in throttle. Deliberately not X-Forwarded-For: a client can
 * write that header, and a throttle it controls throttles nothing. Behind a proxy every client
 * shares the proxy's address, which is why the per-address limit is loose (session-policy.ts).
 */
export function clientAddress(c: Context): string {
  try {
    return getConnInfo(c).remote.address ?? "unknown";
  } catch {
    return "unknown"; // in-process requests (tests) have no socket
  }
}
