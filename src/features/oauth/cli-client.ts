/**
 * The `patchbay` CLI's OAuth client: registered statically (every instance knows it), public
 * (a CLI cannot keep a secret), device authorization and refresh only — it has no redirect URI,
 * so no authorization code can ever be issued to it.
 */
export const CLI_CLIENT_ID = "patchbay-cli";

export const DEVICE_CODE_GRANT = "urn:ietf:params:oauth:grant-type:device_code";

export function cliClient() {
  return {
    client_id: CLI_CLIENT_ID,
    client_name: "patchbay CLI",
    application_type: "native",
    token_endpoint_auth_method: "none",
    grant_types: [DEVICE_CODE_GRANT, "refresh_token"],
    response_types: [],
    redirect_uris: [],
  };
}
