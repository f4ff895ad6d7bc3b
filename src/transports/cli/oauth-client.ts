import { version } from "../../version.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { isRecord } from "./json.ts";

/** What the CLI needs from the authorization server metadata (RFC 8414). */
export type ServerMetadata = {
  issuer: string;
  tokenEndpoint: string;
  deviceAuthorizationEndpoint: string;
  revocationEndpoint?: string;
};

/** The token endpoint's answer (RFC 6749 §5.1). */
export type TokenResponse = {
  access_token: string;
  token_type: string;
  expires_in?: number;
  refresh_token?: string;
  scope?: string;
};

export type DeviceAuthorization = {
  device_code: string;
  user_code: string;
  verification_uri: string;
  verification_uri_complete?: string;
  expires_in: number;
  interval?: number;
};

/** An OAuth error answer (`{ error, error_description }`) from the authorization server. */
export class OAuthError extends Error {
  readonly error: string;
  readonly status: number;
  constructor(status: number, error: string, description?: string) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
    this.error = error;
    this.status = status;
  }
}

const TIMEOUT_MS = 30_000;

async function call(
  url: string,
  init: RequestInit,
  baseUrl: string,
): Promise<{ status: number; body: unknown }> {
  let res: Response;
  try {
    res = await fetch(url, {
      ...init,
      // Never follow: a redirect would carry the device code or a token somewhere else.
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: { accept: "application/json", "user-agent": `patchbay-cli/${version}`, ...init.headers },
    });
  } catch (error) {
    const cause =
      error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
    throw new CliError(
      "unreachable",
      `cannot reach patchbay at ${baseUrl}: ${cause}`,
      exitCodes.other,
      "check that the server is running and --base-url points at it",
    );
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, body };
}

const form = (fields: Record<string, string | undefined>): RequestInit => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(fields)) if (v !== undefined) params.set(k, v);
  return {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: params.toString(),
  };
};

function oauthError(status: number, body: unknown): OAuthError {
  if (isRecord(body) && typeof body.error === "string") {
    return new OAuthError(
      status,
      body.error,
      typeof body.error_description === "string" ? body.error_description : undefined,
    );
  }
  return new OAuthError(status, `http_${status}`);
}

/**
 * Reads `<base>/.well-known/oauth-authorization-server`. Its `issuer` must be the base URL
 * itself (RFC 8414 §3.3): a document naming another issuer is refused, so a proxy or a
 * look-alike cannot send the login elsewhere.
 */
export async function discoverServer(baseUrl: string): Promise<ServerMetadata> {
  const { status, body } = await call(`${baseUrl}/.well-known/oauth-authorization-server`, {}, baseUrl);
  const endpoint = (key: string) =>
    isRecord(body) && typeof body[key] === "string" ? (body[key] as string) : undefined;
  const issuer = endpoint("issuer");
  const tokenEndpoint = endpoint("token_endpoint");
  const deviceAuthorizationEndpoint = endpoint("device_authorization_endpoint");
  if (status !== 200 || !issuer || !tokenEndpoint || !deviceAuthorizationEndpoint) {
    throw new CliError(
      "no_oauth",
      `${baseUrl} does not offer device login (no authorization server metadata, HTTP ${status})`,
      exitCodes.other,
      "check --base-url, or use an API key (PATCHBAY_API_KEY)",
    );
  }
  if (issuer !== baseUrl) {
    throw new CliError(
      "issuer_mismatch",
      `the server at ${baseUrl} says its issuer is ${issuer}`,
      exitCodes.other,
      `log in with --base-url ${issuer}`,
    );
  }
  const revocationEndpoint = endpoint("revocation_endpoint");
  return {
    issuer,
    tokenEndpoint,
    deviceAuthorizationEndpoint,
    ...(revocationEndpoint ? { revocationEndpoint } : {}),
  };
}

export async function startDeviceAuthorization(
  server: ServerMetadata,
  request: { clientId: string; scope: string; resource: string },
): Promise<DeviceAuthorization> {
  const { status, body } = await call(
    server.deviceAuthorizationEndpoint,
    form({ client_id: request.clientId, scope: request.scope, resource: request.resource }),
    server.issuer,
  );
  if (
    status !== 200 ||
    !isRecord(body) ||
    typeof body.device_code !== "string" ||
    typeof body.user_code !== "string"
  ) {
    throw oauthError(status, body);
  }
  return body as DeviceAuthorization;
}

/** One token request (device code or refresh grant); OAuth errors come back as `OAuthError`. */
export async function requestToken(
  server: Pick<ServerMetadata, "issuer" | "tokenEndpoint">,
  fields: Record<string, string | undefined>,
): Promise<TokenResponse> {
  const { status, body } = await call(server.tokenEndpoint, form(fields), server.issuer);
  if (status !== 200 || !isRecord(body) || typeof body.access_token !== "string")
    throw oauthError(status, body);
  return body as TokenResponse;
}

/** RFC 7009: the server answers 200 for any token, known or not. */
export async function revokeToken(
  server: { issuer: string; revocationEndpoint: string },
  fields: { token: string; tokenTypeHint: "refresh_token" | "access_token"; clientId: string },
): Promise<void> {
  const { status, body } = await call(
    server.revocationEndpoint,
    form({ token: fields.token, token_type_hint: fields.tokenTypeHint, client_id: fields.clientId }),
    server.issuer,
  );
  if (status !== 200) throw oauthError(status, body);
}
