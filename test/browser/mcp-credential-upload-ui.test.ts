import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { describe, expect, newTenant } from "../fixtures.ts";
import { ok } from "../lib/mcp-client.ts";
import { echoTool } from "../lib/mcp-servers.ts";
import { haveChromium, screenshot, signIn, webTest as test } from "../lib/web-ui.ts";
import { givePassword, TEST_PASSWORD } from "../web.ts";

/**
 * Spec 4C end to end: a connection's whole lifecycle through the inbound MCP tools only, over
 * real HTTP, with the credential step handed to the owner in a real Chromium while the MCP
 * client polls `prepare_mcp_connection_credential_upload`.
 */

type Conn = { id: string; revision: number; readiness: string; enabled: boolean };
type Upload = { requestId: string; status: string; url?: string };
const TOKEN = "bearer-typed-only-in-the-browser";

describe.skipIf(!haveChromium)("MCP tools + credential upload in Chromium", () => {
  test("create → credential upload (owner in the browser, client polling) → discover → approve → enable → ready → disable → delete", async ({
    web,
    deps,
    app,
    mcp,
  }) => {
    const server = await mcp.start({ auth: { kind: "bearer", token: TOKEN }, tools: [echoTool("search")] });
    const owner = await newTenant(deps, app, "mcp-owner@example.com");
    await givePassword(deps, "mcp-owner@example.com");
    const client = new Client({ name: "lifecycle-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${web.baseUrl}/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${owner.apiKey}` } },
      }),
    );
    const env = { environmentId: owner.environmentId };
    let { connection } = await ok<{ connection: Conn }>(client, "create_mcp_connection", {
      ...env,
      alias: "kb",
      displayName: "Knowledge base",
      endpointUrl: server.url,
      auth: { kind: "bearer" },
    });
    expect(connection.readiness).not.toBe("ready");
    const ref = { ...env, connectionId: connection.id };
    const { upload } = await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
      ...ref,
      revision: connection.revision,
    });

    // The owner opens the link (signing in first) while the client polls.
    const page = await web.newPage();
    await signIn(page, "mcp-owner@example.com", TEST_PASSWORD);
    await page.goto(upload.url ?? "");
    const field = page.getByLabel("Credential");
    expect(await field.getAttribute("type")).toBe("password");
    await screenshot(page, "credential-upload");
    const poll = async () =>
      (
        await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
          ...ref,
          requestId: upload.requestId,
        })
      ).upload.status;
    expect(await poll()).toBe("pending");
    await field.fill(TOKEN);
    await page.getByRole("button", { name: "Set credential" }).click();
    await page.getByText("The credential is stored").waitFor();
    expect(await page.content()).not.toContain(TOKEN);
    expect(await poll()).toBe("completed");

    ({ connection } = await ok<{ connection: Conn }>(client, "get_mcp_connection", ref));
    const { discovery } = await ok<{ discovery: { id: string } }>(client, "discover_mcp_connection_tools", {
      ...ref,
      revision: connection.revision,
    });
    ({ connection } = await ok<{ connection: Conn }>(client, "approve_mcp_connection_tools", {
      ...ref,
      revision: connection.revision,
      discoveryId: discovery.id,
      toolNames: ["search"],
    }));
    ({ connection } = await ok<{ connection: Conn }>(client, "set_mcp_connection_enabled", {
      ...ref,
      revision: connection.revision,
      enabled: true,
    }));
    expect(connection.readiness).toBe("ready");
    ({ connection } = await ok<{ connection: Conn }>(client, "set_mcp_connection_enabled", {
      ...ref,
      revision: connection.revision,
      enabled: false,
    }));
    const { preview } = await ok<{ preview: { receipt: string } }>(
      client,
      "preview_mcp_connection_deletion",
      {
        ...ref,
        revision: connection.revision,
      },
    );
    await ok(client, "delete_mcp_connection", {
      ...ref,
      revision: connection.revision,
      receipt: preview.receipt,
    });
    const list = await ok<{ items: unknown[] }>(client, "list_mcp_connections", env);
    expect(list.items).toEqual([]);
    await client.close();
  });
});
