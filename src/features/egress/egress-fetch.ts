import type { LookupAddress, LookupOptions } from "node:dns";
import { lookup as dnsLookup } from "node:dns/promises";
import tls from "node:tls";
import { Agent, type RequestInit as UndiciRequestInit, fetch as undiciFetch } from "undici";
import { AppError } from "../../errors.ts";
import { type EgressPolicy, isAddressAllowed } from "./address-policy.ts";
import { type ByteCounter, capBody, toAppError } from "./egress-errors.ts";
import { bareHost, refuseTarget } from "./target-rules.ts";

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
  const agent = new Agent({
    connect: {
      lookup: guardedLookup(policy, options.resolve ?? systemResolve),
      timeout: policy.connectTimeoutMs,
      ca: trustRoots(policy.extraCa),
    },
    headersTimeout: policy.headersTimeoutMs,
    bodyTimeout: policy.bodyTimeoutMs,
  });

  const egressFetch: EgressFetch = async (input, init, options) => {
    // A Request carries its own method, headers and body; merge init into it as fetch does.
    const request = input instanceof Request ? new Request(input, init) : undefined;
    const url = new URL(request ? request.url : String(input));
    const refusal = refuseTarget(url, policy);
    if (refusal) throw blocked(refusal.rule, refusal.message);
    const host = bareHost(url);
    const signal = request?.signal ?? init?.signal ?? undefined;

    let response: Awaited<ReturnType<typeof undiciFetch>>;
    try {
      response = await undiciFetch(url, {
        ...(request ? fromRequest(request) : fromInit(init)),
        // A signal of its own per request: undici keeps a listener on the signal it is given
        // until the request is garbage-collected, and the MCP SDK hands every request of a
        // session the same long-lived signal, so each request would add to a growing list.
        signal: signal && AbortSignal.any([signal]),
        redirect: "manual",
        dispatcher: agent,
      });
    } catch (error) {
      if (signal?.aborted) throw error;
      throw toAppError(error, host);
    }

    if (response.status >= 300 && response.status < 400) {
      void response.body?.cancel().catch(() => {});
      throw blocked(
        "redirect",
        `${host} answered with a redirect (${response.status}); redirects are not followed`,
      );
    }
    const declared = Number(response.headers.get("content-length") ?? "0");
    if (!response.headers.has("content-encoding") && declared > policy.maxResponseBytes) {
      void response.body?.cancel().catch(() => {});
      throw blocked("response_too_large", `${host} answered with more than ${policy.maxResponseBytes} bytes`);
    }
    const body =
      response.body && !NULL_BODY_STATUSES.has(response.status)
        ? capBody(response.body, policy.maxResponseBytes, host, options?.count)
        : null;
    const result = new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
    });
    Object.defineProperty(result, "url", { value: response.url });
    return result;
  };

  return {
    fetch: egressFetch,
    close: () => agent.destroy(),
  };
}

function fromInit(init: RequestInit | undefined): UndiciRequestInit {
  if (!init) return {};
  return {
    method: init.method,
    headers: init.headers ? [...new Headers(init.headers)] : undefined,
    body: init.body as UndiciRequestInit["body"],
    duplex: init.body instanceof ReadableStream ? "half" : undefined,
  };
}

function fromRequest(request: Request): UndiciRequestInit {
  return {
    method: request.method,
    headers: [...request.headers],
    body: request.body as UndiciRequestInit["body"],
    duplex: request.body ? "half" : undefined,
  };
}
