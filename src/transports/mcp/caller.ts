import type { AuthInfo } from "@modelcontextprotocol/sdk/server/auth/types.js";
import type { MemberActor } from "../../actor.ts";
import type { ServiceContext } from "../../context.ts";

/**
 * The caller of each `/mcp` request, keyed by the `AuthInfo` object minted for that request alone.
 * The servers (and their tools) are shared between callers, so a handler must never reach a
 * caller through a closure; the SDK hands the very object given to `transport.handleRequest`
 * to every handler of that request as `extra.authInfo`, and only this module can mint a key the
 * map answers for — a request without one fails rather than running as anybody.
 */
const callers = new WeakMap<AuthInfo, ServiceContext<MemberActor>>();

/** What `transport.handleRequest` is given: the token itself stays with the route, unread by the SDK. */
export function callerAuthInfo(ctx: ServiceContext<MemberActor>): AuthInfo {
  const authInfo: AuthInfo = {
    token: "",
    clientId: ctx.actor.id,
    scopes: [...(ctx.actor.oauth?.scopes ?? [])],
  };
  callers.set(authInfo, ctx);
  return authInfo;
}

/** The caller of the request a handler is serving. */
export function callerOf(extra: { authInfo?: AuthInfo | undefined }): ServiceContext<MemberActor> {
  const ctx = extra.authInfo && callers.get(extra.authInfo);
  if (!ctx) throw new Error("An MCP handler ran without its request's caller.");
  return ctx;
}
