import { describe, expect, test } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { createMemberKey } from "../../../test/lib/members.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { mcpConnections } from "../../platform/db/schema/mcp-connections.ts";

describe("Idempotency-Key", () => {
  test("missing key on a mutation is 400 idempotency_key_required and changes nothing", async ({
    owner,
    deps,
  }) => {
    const before = (await deps.db.select().from(environments)).length;
    const res = await owner.api.post("/environments", { name: "nokey" }, { idempotencyKey: false });
    expect(res.status).toBe(400);
    expect((await problem(res)).code).toBe("idempotency_key_required");
    expect((await deps.db.select().from(environments)).length).toBe(before);
  });

  test("same key + same request replays the stored response with Idempotency-Replayed", async ({
    owner,
    deps,
  }) => {
    const first = await owner.api.post("/environments", { name: "once" }, { idempotencyKey: "k-replay" });
    expect(first.status).toBe(201);
    const firstBody = await first.text();
    const second = await owner.api.post("/environments", { name: "once" }, { idempotencyKey: "k-replay" });
    expect(second.status).toBe(201);
    expect(second.headers.get("idempotency-replayed")).toBe("true");
    expect(second.headers.get("etag")).toBe(first.headers.get("etag"));
    expect(second.headers.get("location")).toBe(first.headers.get("location"));
    expect(await second.text()).toBe(firstBody);
    const named = (await deps.db.select().from(environments)).filter((e) => e.name === "once");
    expect(named).toHaveLength(1);
  });

  test("same key + different request is 422 idempotency_key_reused", async ({ owner }) => {
    expect(
      (await owner.api.post("/environments", { name: "a1" }, { idempotencyKey: "k-reuse" })).status,
    ).toBe(201);
    const res = await owner.api.post("/environments", { name: "a2" }, { idempotencyKey: "k-reuse" });
    expect(res.status).toBe(422);
    expect((await problem(res)).code).toBe("idempotency_key_reused");
    const otherPath = await owner.api.patch(
      `/environments/${owner.environmentId}`,
      { name: "a1" },
      { idempotencyKey: "k-reuse", revision: 1 },
    );
    expect(otherPath.status).toBe(422);
  });

  test("keys are scoped to the organisation", async ({ owner, stranger }) => {
    expect(
      (await owner.api.post("/environments", { name: "scoped" }, { idempotencyKey: "shared-key" })).status,
    ).toBe(201);
    const theirs = await stranger.api.post(
      "/environments",
      { name: "scoped" },
      { idempotencyKey: "shared-key" },
    );
    expect(theirs.status).toBe(201);
    expect(theirs.headers.get("idempotency-replayed")).toBeNull();
  });

  test("a failed request releases its key: the corrected retry with the same key runs", async ({ owner }) => {
    const path = `/environments/${owner.environmentId}`;
    const stale = await owner.api.patch(
      path,
      { name: "renamed" },
      { idempotencyKey: "k-retry", revision: 9 },
    );
    expect(stale.status).toBe(412);
    const fixed = await owner.api.patch(
      path,
      { name: "renamed" },
      { idempotencyKey: "k-retry", revision: 1 },
    );
    expect(fixed.status).toBe(200);
    expect(fixed.headers.get("idempotency-replayed")).toBeNull();
  });

  test("concurrent duplicates run once; the others replay the same response", async ({ owner, deps }) => {
    const responses = await Promise.all(
      Array.from({ length: 8 }, () =>
        owner.api.post("/environments", { name: "racy" }, { idempotencyKey: "k-race" }),
      ),
    );
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(201));
    expect(new Set(bodies).size).toBe(1);
    expect(responses.filter((r) => r.headers.get("idempotency-replayed") === "true")).toHaveLength(7);
    expect((await deps.db.select().from(environments)).filter((e) => e.name === "racy")).toHaveLength(1);
  });

  test("a key longer than 255 characters or with control characters is 400", async ({ owner }) => {
    for (const key of ["x".repeat(256), "tab\tkey"]) {
      const res = await owner.api.post("/environments", { name: "bad-key" }, { idempotencyKey: key });
      expect(res.status).toBe(400);
    }
  });
  test("a stored response goes back only to the credential that got it: a member reusing an owner's key is refused, not answered", async ({
    deps,
    app,
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}/mcp-connections`;
    const body = {
      alias: "runbooks",
      displayName: "Runbooks",
      endpointUrl: "https://mcp.example.com/secret-path/mcp",
      auth: { kind: "bearer" },
    };
    const created = await owner.api.post(path, body, { idempotencyKey: "create-runbooks" });
    expect(created.status).toBe(201);
    const createdBody = await created.text();

    // A member may not manage connections (403), so a replay of the owner's answer would leak it.
    const member = await createMemberKey(deps, app, owner);
    const replayed = await member.post(path, body, { idempotencyKey: "create-runbooks" });
    expect(replayed.status).toBe(422);
    expect(replayed.headers.get("idempotency-replayed")).toBeNull();
    const text = await replayed.text();
    expect(JSON.parse(text).code).toBe("idempotency_key_reused");
    expect(text).not.toContain("secret-path");
    expect(text).not.toContain(JSON.parse(createdBody).id);

    // The owner's own narrower key is another credential too.
    const narrow = await owner.api.post("/api-keys", {
      name: "read-only",
      permissions: ["mcp_connections:read"],
    });
    const readOnly = client(app, ((await narrow.json()) as { secret: string }).secret);
    expect((await readOnly.post(path, body, { idempotencyKey: "create-runbooks" })).status).toBe(422);

    // The credential that made it still gets its replay, and nothing was created twice.
    const again = await owner.api.post(path, body, { idempotencyKey: "create-runbooks" });
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotency-replayed")).toBe("true");
    expect(await again.text()).toBe(createdBody);
    expect(await deps.db.select().from(mcpConnections)).toHaveLength(1);
  });
});
