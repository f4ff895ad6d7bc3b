import { eq } from "drizzle-orm";
import type { Tenant } from "../../../test/fixtures.ts";
import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { connectMcp, failed, ok } from "../../../test/lib/mcp-client.ts";
import type { McpServerOptions, McpTestServer } from "../../../test/lib/mcp-servers.ts";
import { givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";
import type { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import { credentialUploads } from "../../platform/db/schema/credential-uploads.ts";
import { vaultSecrets as secrets } from "../../platform/db/schema/secrets.ts";
import { users } from "../../platform/db/schema/users.ts";

type Upload = { requestId: string; status: string; url?: string; revision: number; errorCode?: string };
type Conn = { id: string; revision: number; credential: { set: boolean } | null };

const TOKEN = "s3cret-bearer-for-the-remote";

type Ctx = {
  app: ReturnType<typeof createApp>;
  deps: Deps;
  owner: Tenant;
  mcp: { start(options?: McpServerOptions): Promise<McpTestServer> };
};

/** A bearer connection made over MCP, an upload prepared for it, and its owner signed in to the UI. */
async function setup({ app, deps, owner, mcp }: Ctx) {
  const server = await mcp.start({ auth: { kind: "bearer", token: TOKEN } });
  const client = await connectMcp(app, owner.apiKey);
  const { connection } = await ok<{ connection: Conn }>(client, "create_mcp_connection", {
    environmentId: owner.environmentId,
    alias: "kb",
    displayName: "Knowledge base",
    endpointUrl: server.url,
    auth: { kind: "bearer" },
  });
  const ref = { environmentId: owner.environmentId, connectionId: connection.id };
  const { upload } = await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
    ...ref,
    revision: connection.revision,
  });
  const [user] = await deps.db.select({ email: users.email }).from(users).where(eq(users.id, owner.userId));
  const email = user?.email ?? "";
  await givePassword(deps, email);
  const browser = webClient(app);
  await browser.signIn(email, TEST_PASSWORD);
  const link = new URL(upload.url ?? "");
  return {
    client,
    ref,
    upload,
    browser,
    path: `${link.pathname}${link.search}`,
    token: link.searchParams.get("token") ?? "",
  };
}

describe("prepare_mcp_connection_credential_upload", () => {
  test("the owner sets the credential in the browser while the MCP client polls: pending → completed", async ({
    app,
    deps,
    owner,
    mcp,
    logs,
  }) => {
    const ctx = { app, deps, owner, mcp, logs };
    const { client, ref, upload, browser, path, token } = await setup(ctx);
    expect(upload.status).toBe("pending");
    expect(upload.url).toMatch(/\/credential-uploads\?token=pcu_/);
    const poll = () =>
      ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
        ...ref,
        requestId: upload.requestId,
      });
    expect((await poll()).upload.status).toBe("pending");

    const page = await browser.page(path);
    expect(page).toContain("Knowledge base");
    expect(page).toContain('type="password"');
    const res = await browser.post("/credential-uploads", { token, credential: TOKEN });
    const body = await res.text();
    expect(res.status, body).toBe(200);
    expect(body).not.toContain(TOKEN);

    const done = (await poll()).upload;
    expect(done.status).toBe("completed");
    const { connection } = await ok<{ connection: Conn }>(client, "get_mcp_connection", ref);
    expect(connection.revision).toBe(upload.revision + 1);
    const stored = await ctx.deps.db.select().from(secrets).where(eq(secrets.connectionId, ref.connectionId));
    expect(stored).toHaveLength(1);
    expect(JSON.stringify(stored)).not.toContain(TOKEN);

    // Single use.
    const again = await browser.post("/credential-uploads", { token, credential: TOKEN });
    expect(again.status).toBe(409);
    expect(ctx.logs.text()).not.toContain(TOKEN);
  });

  test("another user, another revision and an expired link are refused", async ({
    app,
    deps,
    owner,
    mcp,
  }) => {
    const ctx = { app, deps, owner, mcp };
    const { client, ref, upload, browser, path, token } = await setup(ctx);

    // Another signed-in user (an owner elsewhere) may not use it.
    await newTenant(ctx.deps, ctx.app, "someone-else@example.com");
    await givePassword(ctx.deps, "someone-else@example.com");
    const other = webClient(ctx.app);
    await other.signIn("someone-else@example.com", TEST_PASSWORD);
    expect((await other.get(path)).status).toBe(403);

    // The connection changes after the link was made: the submission fails as a revision conflict.
    await ok(client, "update_mcp_connection", { ...ref, revision: upload.revision, displayName: "Renamed" });
    await browser.page(path);
    const stale = await browser.post("/credential-uploads", { token, credential: TOKEN });
    expect(stale.status).toBe(412);
    const polled = await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
      ...ref,
      requestId: upload.requestId,
    });
    expect(polled.upload).toMatchObject({ status: "failed", errorCode: "revision_conflict" });

    // A fresh link that runs out of time.
    const fresh = await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
      ...ref,
      revision: upload.revision + 1,
    });
    await ctx.deps.db
      .update(credentialUploads)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(credentialUploads.id, fresh.upload.requestId));
    const expiredToken = new URL(fresh.upload.url ?? "").searchParams.get("token") ?? "";
    expect(
      (await browser.post("/credential-uploads", { token: expiredToken, credential: TOKEN })).status,
    ).toBe(410);
    const expired = await ok<{ upload: Upload }>(client, "prepare_mcp_connection_credential_upload", {
      ...ref,
      requestId: fresh.upload.requestId,
    });
    expect(expired.upload.status).toBe("expired");
  });

  test("polling someone else's request, or preparing for an auth-less connection, is refused", async ({
    app,
    owner,
    stranger,
    mcp,
  }) => {
    const server = await mcp.start();
    const client = await connectMcp(app, owner.apiKey);
    const { connection } = await ok<{ connection: Conn }>(client, "create_mcp_connection", {
      environmentId: owner.environmentId,
      alias: "open",
      displayName: "Open",
      endpointUrl: server.url,
      auth: { kind: "none" },
    });
    const ref = { environmentId: owner.environmentId, connectionId: connection.id };
    const none = await failed(client, "prepare_mcp_connection_credential_upload", { ...ref, revision: 1 });
    expect(none.code).toBe("credential_not_applicable");
    const strangerClient = await connectMcp(app, stranger.apiKey);
    const foreign = await failed(strangerClient, "prepare_mcp_connection_credential_upload", {
      ...ref,
      requestId: "cup_nope",
    });
    expect(foreign.code).toBe("not_found");
  });
});
