import { describe, expect, test } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { apiKeys } from "../../platform/db/schema/api-keys.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";

describe("API keys", () => {
  test("create shows the secret once, stores only its hash, and grants exactly the asked permissions", async ({
    app,
    owner,
    deps,
  }) => {
    const res = await owner.api.post("/api-keys", {
      name: "mcp automation",
      permissions: ["mcp_connections:read", "mcp_connections:manage"],
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const { apiKey, secret } = (await res.json()) as {
      apiKey: { id: string; prefix: string; permissions: string[] };
      secret: string;
    };
    expect(secret).toMatch(/^sk_[0-9a-z]{39}$/);
    expect(secret.startsWith(apiKey.prefix)).toBe(true);
    expect(apiKey.permissions).toEqual(["mcp_connections:read", "mcp_connections:manage"]);

    const stored = await deps.db.select().from(apiKeys);
    expect(JSON.stringify(stored)).not.toContain(secret);

    const list = await owner.api.get("/api-keys");
    expect(await list.text()).not.toContain(secret);

    const me = (await (await client(app, secret).get("/me")).json()) as { permissions: string[] };
    expect(me.permissions).toEqual(["mcp_connections:manage", "mcp_connections:read"]);

    const audits = await deps.db.select().from(auditLog);
    expect(JSON.stringify(audits)).not.toContain(secret);
  });

  test("unknown permissions and empty permission lists are refused", async ({ owner }) => {
    for (const permissions of [["root"], [], "mcp_connections:read"]) {
      const res = await owner.api.post("/api-keys", { name: "bad", permissions });
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
  });

  test("a name with control characters is refused, as every other name is", async ({ owner }) => {
    for (const name of ["bell\u0007", "two\nlines", "del\u007f"]) {
      const res = await owner.api.post("/api-keys", { name, permissions: ["environments:read"] });
      expect(res.status).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
    expect((await (await owner.api.get("/api-keys")).json()).items).toHaveLength(1);
  });

  test("a key without api_keys:manage cannot mint keys (no privilege escalation)", async ({ app, owner }) => {
    const made = await owner.api.post("/api-keys", {
      name: "readonly",
      permissions: ["api_keys:read", "environments:read"],
    });
    const { secret } = (await made.json()) as { secret: string };
    const limited = client(app, secret);
    const res = await limited.post("/api-keys", { name: "escalate", permissions: ["api_keys:manage"] });
    expect(res.status).toBe(403);
    expect((await limited.get("/api-keys")).status).toBe(200);
  });

  test("revoking is idempotent and unknown ids are 404", async ({ owner }) => {
    const made = await owner.api.post("/api-keys", { name: "temp", permissions: ["environments:read"] });
    const { apiKey } = (await made.json()) as { apiKey: { id: string } };
    expect((await owner.api.delete(`/api-keys/${apiKey.id}`)).status).toBe(204);
    expect((await owner.api.delete(`/api-keys/${apiKey.id}`)).status).toBe(204);
    expect((await owner.api.delete("/api-keys/key_unknown")).status).toBe(404);
    const listed = (await (await owner.api.get("/api-keys")).json()) as {
      items: { id: string; revokedAt: string | null }[];
    };
    expect(listed.items.find((k) => k.id === apiKey.id)?.revokedAt).not.toBeNull();
  });
});
