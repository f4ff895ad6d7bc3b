import { API_PATH, MCP_PATH, type ResourceName, resourceUrl, scopesOf } from "../../oauth-resources.ts";

/**
 * RFC 9728 protected-resource metadata for the two resources, `/api/v1` and `/mcp`, so a client
 * holding only a URL can find the authorization server (patchbay itself: its issuer is the base
 * URL) and the scopes to ask for. Served at the path-inserted well-known URLs.
 */
export const resourceMetadataPath = (name: ResourceName): string =>
  `/.well-known/oauth-protected-resource${name === "api" ? API_PATH : MCP_PATH}`;

export function protectedResourceMetadata(baseUrl: string, name: ResourceName) {
  return {
    resource: resourceUrl(baseUrl, name),
    authorization_servers: [baseUrl],
    scopes_supported: [...scopesOf(name)],
    bearer_methods_supported: ["header"],
    resource_name: name === "api" ? "patchbay REST API" : "patchbay MCP server",
    ...(name === "api" ? { resource_documentation: `${baseUrl}/api/v1/docs` } : {}),
  };
}

export type BearerProblem = {
  error: "invalid_token" | "insufficient_scope";
  /** With insufficient_scope: the scope that would do (RFC 6750 §3). */
  scope?: string;
};

const quoted = (value: string) => `"${value.replace(/["\\]/g, "")}"`;

/**
 * The `WWW-Authenticate` challenge (RFC 6750 + RFC 9728): why the token failed, if one was sent,
 * and where the metadata is. `/api/v1` also names its realm.
 */
export function bearerChallenge(baseUrl: string, name: ResourceName, problem?: BearerProblem): string {
  const params: string[] = [];
  if (name === "api") params.push(`realm=${quoted("patchbay")}`);
  if (problem) params.push(`error=${quoted(problem.error)}`);
  if (problem?.scope) params.push(`scope=${quoted(problem.scope)}`);
  params.push(`resource_metadata=${quoted(`${baseUrl}${resourceMetadataPath(name)}`)}`);
  return `Bearer ${params.join(", ")}`;
}
