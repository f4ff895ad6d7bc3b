import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js";
import { AppError } from "../../errors.ts";
import { version } from "../../version.ts";
import type { ByteCounter } from "../egress/egress-errors.ts";
import type { Egress } from "../egress/egress-fetch.ts";
import { parseEndpoint } from "./endpoint-url.ts";
import { lazyValidator } from "./lazy-validator.ts";
import { authHeader, type RemoteAuth } from "./remote-auth-header.ts";

export type RemoteTarget = {
  egress: Pick<Egress, "fetch">;
  /** The stored, validated endpoint URL. Only its host ever appears in an error. */
  endpointUrl: string;
  auth: RemoteAuth;
  /**
   * Budget for connect, initialize and `fn` together (default DEFAULT_TIMEOUT_MS); past it the
   * session is abandoned with `remote_timeout`. Closing adds at most END_SESSION_MS.
   */
  timeoutMs?: number;
};

/**
 * The SDK client and transport for one endpoint, wired so that every request goes through
 * egress (no redirects, no private addresses, size and time caps), never leaves the endpoint's
 * origin, and carries the credential only as it leaves — the SDK itself never sees it and gets
 * no OAuth provider. `count` sees every body chunk received.
 */
export function createEndpointClient(target: RemoteTarget, count?: ByteCounter) {
  const endpoint = parseEndpoint(target.endpointUrl);
  const credential = authHeader(target.auth);
  const fetchThrough: FetchLike = async (input, init) => {
    const url = new URL(input);
    if (url.origin !== endpoint.origin) {
      throw new AppError("egress_blocked", `A request for ${endpoint.host} tried to leave its origin.`, {
        rule: "cross_origin",
      });
    }
    const headers = new Headers(init?.headers);
    if (credential) headers.set(credential.name, credential.value);
    // Counted inside egress's own body cap: one stream wrap per response, not two.
    return target.egress.fetch(url, { ...init, headers }, count ? { count } : undefined);
  };
  const transport = new StreamableHTTPClientTransport(endpoint, {
    fetch: fetchThrough,
    // No resumption: no reconnect timers outlive the session, and nothing is re-sent.
    reconnectionOptions: {
      maxRetries: 0,
      initialReconnectionDelay: 1_000,
      maxReconnectionDelay: 1_000,
      reconnectionDelayGrowFactor: 1,
    },
  });
  const client = new Client(
    { name: "patchbay", version },
    { capabilities: {}, jsonSchemaValidator: lazyValidator() },
  );
  return { client, transport };
}
