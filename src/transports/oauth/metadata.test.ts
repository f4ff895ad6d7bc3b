import { createPublicKey } from "node:crypto";
import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
  OpenIdProviderDiscoveryMetadataSchema,
} from "@modelcontextprotocol/sdk/shared/auth.js";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { permissions } from "../../permissions.ts";

describe("authorization server metadata (RFC 8414)", () => {
  test("validates, names this issuer and every endpoint under it, and offers only what patchbay supports", async ({
    app,
    deps,
  }) => {
    const base = deps.config.baseUrl;
    const res = await app.request("/.well-known/oauth-authorization-server");
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const metadata = OAuthMetadataSchema.parse(await res.json());
    // RFC 8414 §3.3: the issuer must be the URL the document was derived from.
    expect(metadata.issuer).toBe(base);
    expect(metadata).toMatchObject({
      authorization_endpoint: `${base}/oauth/authorize`,
      token_endpoint: `${base}/oauth/token`,
      registration_endpoint: `${base}/oauth/register`,
      revocation_endpoint: `${base}/oauth/revoke`,
      device_authorization_endpoint: `${base}/oauth/device_authorization`,
      jwks_uri: `${base}/oauth/jwks`,
      response_types_supported: ["code"],
      code_challenge_methods_supported: ["S256"],
    });
    // OAuth 2.1: no implicit grant, no password grant.
    expect([...(metadata.grant_types_supported ?? [])].sort()).toEqual([
      "authorization_code",
      "refresh_token",
      "urn:ietf:params:oauth:grant-type:device_code",
    ]);
    expect(metadata.scopes_supported).toEqual(
      expect.arrayContaining(["patchbay.mcp.read", "patchbay.mcp.write", "offline_access", ...permissions]),
    );
    expect(metadata.token_endpoint_auth_methods_supported).toContain("none");
  });

  test("the OpenID discovery document says the same", async ({ app, deps }) => {
    const oauth = await (await app.request("/.well-known/oauth-authorization-server")).json();
    const res = await app.request("/.well-known/openid-configuration");
    expect(res.status).toBe(200);
    const raw = await res.json();
    expect(OpenIdProviderDiscoveryMetadataSchema.parse(raw).issuer).toBe(deps.config.baseUrl);
    expect(raw).toEqual(oauth);
  });

  test("the JWKS publishes one Ed25519 public key per KEK version and no private part", async ({ app }) => {
    const res = await app.request("/oauth/jwks");
    expect(res.status).toBe(200);
    const { keys } = (await res.json()) as { keys: Record<string, string>[] };
    expect(keys).toHaveLength(1);
    const [key] = keys;
    expect(key).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig", kid: "patchbay-v1" });
    expect(key).not.toHaveProperty("d");
    expect(createPublicKey({ key: key as never, format: "jwk" }).asymmetricKeyType).toBe("ed25519");
  });
});

describe("protected resource metadata (RFC 9728)", () => {
  for (const [name, path, scopes] of [
    ["/api/v1", "/.well-known/oauth-protected-resource/api/v1", permissions],
    ["/mcp", "/.well-known/oauth-protected-resource/mcp", ["patchbay.mcp.read", "patchbay.mcp.write"]],
  ] as const) {
    test(`${name}: validates, names the resource and the authorization server whose metadata names it back`, async ({
      app,
      deps,
    }) => {
      const base = deps.config.baseUrl;
      const res = await app.request(path);
      expect(res.status).toBe(200);
      const metadata = OAuthProtectedResourceMetadataSchema.parse(await res.json());
      // RFC 9728 §3.3: the resource must be the URL the well-known path was derived from.
      expect(metadata.resource).toBe(`${base}${name}`);
      expect(metadata.scopes_supported).toEqual([...scopes]);
      expect(metadata.bearer_methods_supported).toEqual(["header"]);
      expect(metadata.authorization_servers).toEqual([base]);
      // The authorization server it names publishes metadata whose issuer is exactly that URL.
      const issuer = metadata.authorization_servers?.[0] ?? "";
      const as = OAuthMetadataSchema.parse(
        await (await app.request(`${issuer}/.well-known/oauth-authorization-server`)).json(),
      );
      expect(as.issuer).toBe(issuer);
    });
  }

  test("401s on both resources point at their own metadata", async ({ app, deps }) => {
    const base = deps.config.baseUrl;
    const api = await app.request("/api/v1/me");
    expect(api.status).toBe(401);
    expect(api.headers.get("www-authenticate")).toBe(
      `Bearer realm="patchbay", resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1"`,
    );
    const bad = await app.request("/api/v1/me", {
      headers: { authorization: "Bearer not-a-real-token-at-all-xx" },
    });
    expect(bad.headers.get("www-authenticate")).toBe(
      `Bearer realm="patchbay", error="invalid_token", resource_metadata="${base}/.well-known/oauth-protected-resource/api/v1"`,
    );
    const mcp = await app.request(`${base}/mcp`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: "{}",
    });
    expect(mcp.status).toBe(401);
    expect(mcp.headers.get("www-authenticate")).toBe(
      `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"`,
    );
  });
});
