import { version } from "../../version.ts";
import { CliError, exitCodes } from "./cli-error.ts";
import { isRecord, parseJson } from "./json.ts";

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
  constructor(error: string, description?: string) {
    super(description ? `${error}: ${description}` : error);
    this.name = "OAuthError";
    this.error = error;
  }
}

const TIMEOUT_MS = 30_000;

type Form = Record<string, string | undefined>;

async function call(url: string, baseUrl: string, form?: Form) {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(form ?? {})) if (v !== undefined) params.set(k, v);
  let res: Response;
  try {
    res = await fetch(url, {
      ...(form ? { method: "POST", body: params.toString() } : {}),
      // Never follow: a redirect would carry the device code or a token somewhere else.
      redirect: "manual",
      signal: AbortSignal.timeout(TIMEOUT_MS),
      headers: {
        accept: "application/json",
        "user-agent": `patchbay-cli/${version}`,
        ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
      },
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
  return { status: res.status, body: parseJson(await res.text()) };
}

/** POSTs the form to an OAuth endpoint: the body of a 200 with the `required` strings, else an `OAuthError`. */
async function post(url: string, issuer: string, form: Form, required: string[]): Promise<unknown> {
  const { status, body } = await call(url, issuer, form);
  const fields = isRecord(body) ? body : {};
  if (status === 200 && required.every((key) => typeof fields[key] === "string")) return body;
  if (typeof fields.error !== "string") throw new OAuthError(`http_${status}`);
  const description = fields.error_description;
  throw new OAuthError(fields.error, typeof description === "string" ? description : undefined);
}

/**
 * Reads `<base>/.well-known/oauth-authorization-server`. Its `issuer` must be the base URL
 * itself (RFC 8414 §3.3): a document naming another issuer is refused, so a proxy or a
 * look-alike cannot send the login elsewhere.
 */
export async function discoverServer(baseUrl: string): Promise<ServerMetadata> {
  const { status, body } = await call(`${baseUrl}/.well-known/oauth-authorization-server`, baseUrl);
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

export const startDeviceAuthorization = (server: ServerMetadata, form: Form) =>
  post(server.deviceAuthorizationEndpoint, server.issuer, form, [
    "device_code",
    "user_code",
  ]) as Promise<DeviceAuthorization>;

/** One token request (device code or refresh grant); OAuth errors come back as `OAuthError`. */
export const requestToken = (server: Pick<ServerMetadata, "issuer" | "tokenEndpoint">, form: Form) =>
  post(server.tokenEndpoint, server.issuer, form, ["access_token"]) as Promise<TokenResponse>;

/** RFC 7009: the server answers 200 for any token, known or not. */
export const revokeToken = async (server: { issuer: string; revocationEndpoint: string }, form: Form) => {
  await post(server.revocationEndpoint, server.issuer, form, []);
};
