import type { KoaContextWithOIDC } from "oidc-provider";
import { apiScopes, mcpScopes } from "../../oauth-resources.ts";

/**
 * The authorization server metadata (RFC 8414, and the OIDC discovery twin) as oidc-provider
 * writes it lists only its own scopes; resource scopes live with the resources. This lists them
 * too, so a client reading only this document can ask for them.
 */
export function completeDiscovery(baseUrl: string) {
  return async (ctx: KoaContextWithOIDC, next: () => Promise<void>): Promise<void> => {
    await next();
    if (ctx.oidc?.route !== "discovery" || typeof ctx.body !== "object" || ctx.body === null) return;
    const metadata = ctx.body as Record<string, unknown>;
    const own = Array.isArray(metadata.scopes_supported) ? metadata.scopes_supported.map(String) : [];
    metadata.scopes_supported = [...new Set([...own, ...mcpScopes, ...apiScopes])];
    metadata.service_documentation = `${baseUrl}/api/v1/docs`;
  };
}
