import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AppError, isAppError } from "../../errors.ts";
import type { DiscoveredTool } from "../db/schema/mcp-discoveries.ts";
import { assessTool, discoveryLimitExceeded, MAX_LISTING_BYTES, markDuplicateNames } from "./bounds.ts";
import type { RemoteTarget } from "./endpoint-client.ts";
import { parseEndpoint } from "./endpoint-url.ts";
import { hashCanonicalManifest } from "./tool-hash.ts";
import { forEachToolPage } from "./tool-pages.ts";

/** A cap on the bytes received over the whole session (every response, decoded). */
export type ReceiveLimit = { maxBytes: number; exceeded: (observed: number, host: string) => AppError };

export type RemoteToolListing = { tools: DiscoveredTool[]; manifestHash: string };

export const DEFAULT_TIMEOUT_MS = 60_000;
/** How long closing waits for the server to acknowledge the end of a session it opened. */
const END_SESSION_MS = 1_000;

/**
 * Runs `fn` with an initialized MCP client for the endpoint, then closes it (also on error
 * and on timeout). Every request goes through `egress.fetch` (no redirects, no private
 * addresses, size and time caps) and stays on the endpoint's origin; the credential is added
 * to each request as it leaves and is never given to the SDK, which gets no OAuth provider.
 * Failures come out as AppErrors (see remote-errors.ts) naming the host only.
 */
export async function withRemoteClient<T>(
  target: RemoteTarget & { receiveLimit?: ReceiveLimit },
  fn: (client: Client) => Promise<T>,
): Promise<T> {
  const timeoutMs = target.timeoutMs ?? DEFAULT_TIMEOUT_MS;

  let stop: (error: AppError) => void = () => {};
  const stopped = new Promise<never>((_, reject) => {
    stop = reject;
  });

  let received = 0;
  const limit = target.receiveLimit;
  const host = parseEndpoint(target.endpointUrl).host;
  const countBytes = (bytes: number): AppError | undefined => {
    received += bytes;
    if (!limit || received <= limit.maxBytes) return undefined;
    const error = limit.exceeded(received, host);
    // An SSE body's error only reaches the SDK's onerror, so end the session from here too.
    stop(error);
    return error;
  };
  // The MCP SDK's client is loaded on the first remote call (a discovery or a credential check),
  // not at every start of a server that may never make one. Its error mapping too: it imports
  // the SDK's error classes, and with them the SDK's protocol schemas (~10 ms of a start).
  const [{ createEndpointClient }, { toRemoteError }] = await Promise.all([
    import("./endpoint-client.ts"),
    import("./remote-errors.ts"),
  ]);
  const { client, transport } = createEndpointClient(target, limit ? countBytes : undefined);

  let failure: unknown;
  const timer = setTimeout(() => {
    stop(
      new AppError("remote_timeout", `${host} did not finish in time (${timeoutMs} ms).`, {
        phase: "request",
      }),
    );
  }, timeoutMs);
  try {
    const work = (async () => {
      await client.connect(transport);
      return fn(client);
    })();
    return await Promise.race([work, stopped]);
  } catch (error) {
    failure = toRemoteError(error, host, target.auth.kind);
    throw failure;
  } finally {
    clearTimeout(timer);
    // A server that timed out or dropped the connection is not asked again.
    if (!isAppError(failure) || !["remote_timeout", "remote_unreachable"].includes(failure.code)) {
      await endSession(transport);
    }
    await client.close().catch(() => {});
  }
}

/**
 * DESIGN §5 Discover: `initialize` + `tools/list` across every page, within the bounds
 * (≤ MAX_PAGES pages, ≤ MAX_TOOLS tools, ≤ MAX_LISTING_BYTES received), then each tool
 * assessed. A name listed twice makes every tool of that name not approvable ("duplicate
 * name") rather than failing the discovery. `manifestHash` covers every listed tool.
 */
export async function listRemoteTools(target: RemoteTarget): Promise<RemoteToolListing> {
  const host = parseEndpoint(target.endpointUrl).host;
  const receiveLimit: ReceiveLimit = {
    maxBytes: MAX_LISTING_BYTES,
    exceeded: (observed) =>
      discoveryLimitExceeded(
        "bytes",
        MAX_LISTING_BYTES,
        observed,
        `${host} sent more than ${MAX_LISTING_BYTES / 1024 / 1024} MiB while listing its tools.`,
      ),
  };
  const assessed: ReturnType<typeof assessTool>[] = [];
  await withRemoteClient({ ...target, receiveLimit }, (client) =>
    forEachToolPage(client, host, (page) => {
      for (const tool of page) assessed.push(assessTool(tool));
    }),
  );
  const tools = markDuplicateNames(assessed.map((entry) => entry.tool));
  const manifestHash = hashCanonicalManifest(assessed.map(({ tool, json }) => ({ name: tool.name, json })));
  return { tools, manifestHash };
}

/** Politely ends a session the server opened (Mcp-Session-Id), without waiting long for it. */
async function endSession(transport: StreamableHTTPClientTransport): Promise<void> {
  if (transport.sessionId === undefined) return;
  let timer: NodeJS.Timeout | undefined;
  const givenUp = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, END_SESSION_MS);
  });
  await Promise.race([transport.terminateSession().catch(() => {}), givenUp]);
  clearTimeout(timer);
}
