import {
  FacilitatorResponseError,
  type HTTPAdapter,
  type HTTPProcessResult,
  type HTTPRequestContext,
  type x402HTTPResourceServer,
} from "@x402/core/server";
import type { Context } from "hono";
import { facilitatorUnavailable } from "./payment-responses.ts";

/**
 * The SDK's view of a request: unlike `@x402/hono`'s, its resource URL is the public base URL,
 * and it can hide the payment header (an unlockable payment gets a plain challenge).
 */
export function requestContext(
  c: Context,
  baseUrl: string,
  options: { hidePayment?: boolean } = {},
): HTTPRequestContext {
  const method = c.req.method === "HEAD" ? "GET" : c.req.method;
  const oneOrAll = (values: string[]) => (values.length === 1 ? (values[0] ?? "") : values);
  const adapter: HTTPAdapter = {
    getHeader: (name) =>
      options.hidePayment && /^(payment-signature|x-payment)$/i.test(name) ? undefined : c.req.header(name),
    getMethod: () => method,
    getPath: () => c.req.path,
    getUrl: () => `${baseUrl}${c.req.path}${new URL(c.req.url).search}`,
    getAcceptHeader: () => c.req.header("accept") ?? "",
    getUserAgent: () => c.req.header("user-agent") ?? "",
    getQueryParams: () =>
      Object.fromEntries(Object.entries(c.req.queries()).map(([key, values]) => [key, oneOrAll(values)])),
    getQueryParam: (name) => {
      const values = c.req.queries(name);
      return values && values.length > 0 ? oneOrAll(values) : undefined;
    },
    async getBody() {
      try {
        return await c.req.json();
      } catch {
        return undefined;
      }
    },
  };
  return { adapter, path: c.req.path, method };
}

/** The SDK's request processing; a facilitator outage is our 503 (Retry-After), never its message. */
export async function processRequest(
  http: x402HTTPResourceServer,
  request: HTTPRequestContext,
): Promise<HTTPProcessResult> {
  try {
    return await http.processHTTPRequest(request);
  } catch (error) {
    if (error instanceof FacilitatorResponseError) throw facilitatorUnavailable();
    throw error;
  }
}
