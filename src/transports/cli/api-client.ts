import { version } from "../../version.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { isRecord, parseJson } from "./json.ts";
import { accessTokenFor } from "./oauth-session.ts";
import type { ClientSettings } from "./settings.ts";

/** An RFC 9457 body as the API sends it (docs/api-conventions.md); extra fields depend on `code`. */
export type Problem = {
  code: string;
  status: number;
  detail?: string;
  requestId?: string;
  [extra: string]: unknown;
};

/** The API answered with an error status. */
export class ApiError extends Error {
  readonly problem: Problem;

  constructor(problem: Problem) {
    super(problem.detail ?? `HTTP ${problem.status}`);
    this.name = "ApiError";
    this.problem = problem;
  }
}

export type ApiRequest = {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Below `/api/v1`, e.g. `/me`. */
  path: string;
  query?: Record<string, string | undefined>;
  body?: unknown;
  headers?: Record<string, string>;
};

/** Discovery and credential checks wait on the remote server; the server bounds those itself. */
const TIMEOUT_MS = 120_000;

/**
 * A request to `/api/v1` over the global fetch; resolves to the answer's JSON body. Errors become
 * `ApiError` (HTTP) or `CliError` (network). With a login (OAuth) credential the access token is
 * refreshed transparently: before a request when it is about to expire, and once more if the API
 * answers 401 anyway.
 */
export function createApiClient(settings: ClientSettings): (request: ApiRequest) => Promise<unknown> {
  const { baseUrl, credential } = settings;
  const bearer = (force = false): Promise<string> =>
    credential.kind === "api_key"
      ? Promise.resolve(credential.key)
      : accessTokenFor(credential.path, settings.profile, credential.session, { force });
  return async (request) => {
    const url = new URL(`${baseUrl}/api/v1${request.path}`);
    for (const [name, value] of Object.entries(request.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, value);
    }
    const hasBody = request.body !== undefined;
    const send = (token: string) =>
      fetch(url, {
        method: request.method,
        headers: {
          accept: "application/json, application/problem+json",
          authorization: `Bearer ${token}`,
          "user-agent": `patchbay-cli/${version}`,
          ...request.headers,
          ...(hasBody ? { "content-type": "application/json" } : {}),
        },
        body: hasBody ? JSON.stringify(request.body) : undefined,
        redirect: "manual", // never replay the credential to wherever a redirect points
        signal: AbortSignal.timeout(TIMEOUT_MS),
      }).catch((error: unknown) => {
        throw networkError(baseUrl, error);
      });
    let res = await send(await bearer());
    if (res.status === 401 && credential.kind === "oauth") {
      // Expired early, or revoked: one refresh (which forgets a login the server ended), one retry.
      await res.arrayBuffer();
      res = await send(await bearer(true));
    }
    const text = await res.text();
    const body = parseJson(text);
    if (res.status < 200 || res.status >= 300) throw new ApiError(toProblem(res, body));
    if (text !== "" && body === undefined) {
      throw new CliError(
        "bad_response",
        `${url.pathname} answered with a body that is not JSON`,
        exitCodes.other,
      );
    }
    return body;
  };
}

function toProblem(res: Response, body: unknown): Problem {
  if (isRecord(body) && typeof body.code === "string") {
    return { ...body, code: body.code, status: res.status };
  }
  // Not our problem+json (a proxy, a redirect, an older server): keep what can be said.
  const where = res.status >= 300 && res.status < 400 ? ` to ${res.headers.get("location") ?? "?"}` : "";
  return { code: `http_${res.status}`, status: res.status, detail: `HTTP ${res.status}${where}` };
}

function networkError(baseUrl: string, error: unknown): CliError {
  const timedOut = error instanceof DOMException && error.name === "TimeoutError";
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
  return new CliError(
    timedOut ? "timeout" : "unreachable",
    timedOut
      ? `patchbay at ${baseUrl} did not answer within ${TIMEOUT_MS / 1000} s`
      : `cannot reach patchbay at ${baseUrl}: ${cause}`,
    exitCodes.other,
    "check that the server is running and --base-url (or the profile's base URL) points at it",
  );
}
