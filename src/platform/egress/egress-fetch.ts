import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import { STATUS_CODES } from "node:http";
import tls from "node:tls";
import type { Dispatcher } from "undici";
import { AppError } from "../../errors.ts";
import { loadOnce } from "../load-once.ts";
import { type EgressPolicy, isAddressAllowed } from "./address-policy.ts";
import { decodeBody } from "./decode-body.ts";
import { type ByteCounter, capBody, toAppError } from "./egress-errors.ts";
import { bareHost, refuseTarget } from "./target-rules.ts";
import { wireRequest } from "./wire-request.ts";

/** Resolves a name to every address it has. Injectable for tests only. */
export type Resolve = (hostname: string) => Promise<LookupAddress[]>;

/** Per request, beyond fetch's own options. */
export type EgressOptions = {
  /** Sees every decoded body chunk after the policy's cap; an AppError returned ends the body. */
  count?: ByteCounter;
};

/** fetch-compatible (a fetch with an optional third argument). */
export type EgressFetch = (
  input: RequestInfo | URL,
  init?: RequestInit,
  options?: EgressOptions,
) => Promise<Response>;

export type Egress = {
  /** Hand it to the MCP SDK's transports as their fetch; every outbound call uses it. */
  fetch: EgressFetch;
  /** Cuts every open connection; pending calls fail. */
  close(): Promise<void>;
};

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

const systemResolve: Resolve = (hostname) => dnsLookup(hostname, { all: true, order: "verbatim" });

// A Response with one of these statuses must not have a body (the constructor throws).
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

const blocked = (rule: string, message: string) => new AppError("egress_blocked", message, { rule });

/**
 * The socket's own name resolution. It runs when the connection is dialled, so the
 * addresses checked are the addresses dialled: a name that answered "public" earlier and
 * "private" now (DNS rebinding) is refused. One disallowed address refuses the whole name.
 */
function guardedLookup(policy: EgressPolicy, resolve: Resolve) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(hostname).then(
      (answers) => {
        if (answers.some((answer) => !isAddressAllowed(answer.address, policy))) {
          // The address stays out of the message: it may come from an internal resolver.
          callback(
            blocked("address_not_global", `${hostname} resolves to an address that is not allowed`),
            [],
          );
          return;
        }
        const usable = answers.filter((answer) => !options.family || answer.family === options.family);
        const first = usable[0];
        if (!first) {
          const err: NodeJS.ErrnoException = new Error(`${hostname} has no usable address`);
          err.code = "ENOTFOUND";
          callback(err, []);
          return;
        }
        if (options.all) callback(null, usable);
        else callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, []),
    );
  };
}

function trustRoots(extraCa: string | undefined): string[] | undefined {
  if (!extraCa) return undefined;
  // getCACertificates("default") keeps NODE_EXTRA_CA_CERTS / system roots when enabled.
  const defaults =
    typeof tls.getCACertificates === "function" ? tls.getCACertificates("default") : tls.rootCertificates;
  return [...defaults, extraCa];
}

/**
 * Builds the one protected path for outbound HTTP. Per request: https only, no userinfo,
 * an allowed port, IP literals checked before dialling, local names refused; at dial time
 * every resolved address is checked. Redirects are refused (never followed), timeouts and a
 * response size cap apply, and proxy environment variables are ignored (undici's Agent
 * never reads them).
 */
export function createEgress(policy: EgressPolicy, options: { resolve?: Resolve } = {}): Egress {
  // undici (about 1 MB of JavaScript) is loaded on the first outbound request, not at every
  // start. Its `default` export is the package's exports object both under Node, which imports
  // CommonJS with a default, and in the bundle, where a dynamic import of CommonJS exposes only
  // `default`: named exports would be undefined there.
  const agentOf = loadOnce(async () => {
    const { default: undici } = await import("undici");
    return new undici.Agent({
      connect: {
        lookup: guardedLookup(policy, options.resolve ?? systemResolve),
        timeout: policy.connectTimeoutMs,
        ca: trustRoots(policy.extraCa),
      },
      headersTimeout: policy.headersTimeoutMs,
      bodyTimeout: policy.bodyTimeoutMs,
    });
  });

  const egressFetch: EgressFetch = async (input, init, options) => {
    // A Request carries its own method, headers and body; merge init into it as fetch does.
    const request = input instanceof Request ? new Request(input, init) : undefined;
    const url = new URL(request ? request.url : String(input));
    const refusal = refuseTarget(url, policy);
    if (refusal) throw blocked(refusal.rule, refusal.message);
    const host = bareHost(url);
    const signal = request?.signal ?? init?.signal ?? undefined;
    if (signal?.aborted) throw signal.reason;

    // undici's `request()`, not its fetch: the same agent, checks and timeouts, at about half
    // the CPU per call (fetch re-wraps every request and body in WHATWG streams and objects).
    // It never follows redirects and adds no headers; wireRequest supplies fetch's defaults.
    let response: Dispatcher.ResponseData;
    try {
      const wire = await wireRequest(request, init);
      response = await (await agentOf()).request({
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
        method: wire.method as Dispatcher.HttpMethod,
        headers: wire.headers,
        body: wire.body,
        // A signal of its own per request: undici keeps a listener on the signal it is given
        // until the request is garbage-collected, and the MCP SDK hands every request of a
        // session the same long-lived signal, so each request would add to a growing list.
        signal: signal && AbortSignal.any([signal]),
      });
    } catch (error) {
      if (signal?.aborted) throw signal.reason;
      throw toAppError(error, host);
    }

    const { statusCode: status, headers, body } = response;
    const discard = () => void body.dump().catch(() => {});
    if (status >= 300 && status < 400) {
      discard();
      throw blocked("redirect", `${host} answered with a redirect (${status}); redirects are not followed`);
    }
    const encoding = headerValue(headers["content-encoding"]);
    const declared = Number(headerValue(headers["content-length"]) ?? "0");
    if (!encoding && declared > policy.maxResponseBytes) {
      discard();
      throw blocked("response_too_large", `${host} answered with more than ${policy.maxResponseBytes} bytes`);
    }
    const bodyless = NULL_BODY_STATUSES.has(status) || request?.method === "HEAD" || init?.method === "HEAD";
    if (bodyless) discard();
    const result = new Response(
      bodyless
        ? null
        : capBody(decodeBody(body, encoding), policy.maxResponseBytes, host, options?.count, signal),
      { status, statusText: STATUS_CODES[status] ?? "", headers: responseHeaders(headers) },
    );
    Object.defineProperty(result, "url", { value: url.toString() });
    return result;
  };

  return {
    fetch: egressFetch,
    close: async () => {
      const agent = await agentOf.started()?.catch(() => undefined);
      await agent?.destroy();
    },
  };
}

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(", ") : value;
}

function responseHeaders(raw: Dispatcher.ResponseData["headers"]): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(raw)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.append(name, value);
  }
  return headers;
}
