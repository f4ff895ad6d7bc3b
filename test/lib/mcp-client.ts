// Test support (not imported by the service): the official SDK client talking to the
// in-process app through `app.request`, no sockets.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { ERROR_META_KEY } from "../../src/transports/mcp/tool-errors.ts";

type AppLike = { request(input: string, init?: RequestInit): Response | Promise<Response> };

export const MCP_URL = "http://127.0.0.1/mcp";

export async function connectMcp(app: AppLike, key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(MCP_URL), {
    requestInit: { headers: { authorization: `Bearer ${key}` } },
    fetch: async (url, init) => app.request(String(url), init),
  });
  const client = new Client({ name: "patchbay-test", version: "1.0.0" });
  await client.connect(transport);
  return client;
}

/** Calls a tool and returns its result as the SDK typed it (content, structuredContent, …). */
export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult;
}

/** The structured result of a successful call; fails the test with the text otherwise. */
export async function ok<T>(client: Client, name: string, args: Record<string, unknown>): Promise<T> {
  const result = await callTool(client, name, args);
  if (result.isError || !result.structuredContent) {
    throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
  }
  return result.structuredContent as T;
}

export type ToolError = { code: string; message: string; nextStep?: string; requestId: string } & Record<
  string,
  unknown
>;

/** The error of a failed call, with its text; fails the test when the call succeeded. */
export async function failed(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<ToolError & { text: string }> {
  const result = await callTool(client, name, args);
  if (!result.isError) throw new Error(`${name} unexpectedly succeeded: ${JSON.stringify(result)}`);
  const first = result.content[0];
  const text = first?.type === "text" ? first.text : "";
  const error = result._meta?.[ERROR_META_KEY] as ToolError | undefined;
  return { ...(error ?? { code: "(none)", message: text, requestId: "" }), text };
}
