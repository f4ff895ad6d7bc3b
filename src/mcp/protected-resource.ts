/**
 * RFC 9728 protected-resource metadata for `/mcp`, so MCP clients can discover how to get a
 * token. The authorization server arrives with OAuth (issue 5); until then the list is empty
 * and only API keys work (docs/mcp.md).
 */
export const mcpScopes = ["patchbay.mcp.read", "patchbay.mcp.write"] as const;

export const MCP_PATH = "/mcp";
export const MCP_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/mcp";

export function protectedResourceMetadata(baseUrl: string) {
  return {
    resource: `${baseUrl}${MCP_PATH}`,
    authorization_servers: [] as string[],
    scopes_supported: [...mcpScopes],
    bearer_methods_supported: ["header"],
  };
}

/** The 401 challenge (RFC 6750 + RFC 9728): where the metadata is, and why a token failed. */
export function bearerChallenge(baseUrl: string, tokenPresented: boolean): string {
  const error = tokenPresented ? 'error="invalid_token", ' : "";
  return `Bearer ${error}resource_metadata="${baseUrl}${MCP_RESOURCE_METADATA_PATH}"`;
}
