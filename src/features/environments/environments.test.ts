import { randomUUID } from "node:crypto";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";
import { selectEnvironments } from "./find-environment.ts";

describe("environments", () => {
  test("the bootstrap environment is listed, readable and carries an ETag", async ({ owner }) => {
    const list = await owner.api.get("/environments");
    expect(list.status).toBe(200);
    const body = (await list.json()) as { items: { id: string; name: string }[]; nextCursor: string | null };
    expect(body.items).toEqual([
      expect.objectContaining({ id: owner.environmentId, name: "production", revision: 1 }),
    ]);
    expect(body.nextCursor).toBeNull();

    const one = await owner.api.get(`/environments/${owner.environmentId}`);
    expect(one.status).toBe(200);
    expect(one.headers.get("etag")).toBe('"1"');
  });

  test("create answers 201 with Location and ETag; duplicate names are 409 name_taken", async ({ owner }) => {
    const res = await owner.api.post("/environments", { name: "staging" });
    expect(res.status).toBe(201);
    const env = (await res.json()) as { id: string; revision: number };
    expect(res.headers.get("location")).toBe(`/api/v1/environments/${env.id}`);
    expect(res.headers.get("etag")).toBe('"1"');
    const dup = await owner.api.post("/environments", { name: "staging" });
    expect(dup.status).toBe(409);
    expect((await problem(dup)).code).toBe("name_taken");
  });

  test("pagination walks every page exactly once", async ({ owner }) => {
    for (let i = 0; i < 5; i++)
      expect((await owner.api.post("/environments", { name: `env-${i}` })).status).toBe(201);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const res = await owner.api.get(`/environments?pageSize=2${cursor ? `&cursor=${cursor}` : ""}`);
      expect(res.status).toBe(200);
      const page = (await res.json()) as { items: { name: string }[]; nextCursor: string | null };
      expect(page.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.items.map((e) => e.name));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual(["production", "env-0", "env-1", "env-2", "env-3", "env-4"]);
  });

  test("bad paging parameters are 400 invalid_request", async ({ owner }) => {
    for (const q of ["pageSize=0", "pageSize=201", "pageSize=abc", "cursor=not-a-cursor"]) {
      const res = await owner.api.get(`/environments?${q}`);
      expect(res.status, q).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
  });

  test("rename needs If-Match: 428 without, 412 stale with currentRevision, 200 and a new ETag", async ({
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}`;
    const missing = await owner.api.patch(path, { name: "prod" });
    expect(missing.status).toBe(428);
    expect((await problem(missing)).code).toBe("precondition_required");

    const ok = await owner.api.patch(path, { name: "prod" }, { revision: 1 });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("etag")).toBe('"2"');
    expect(await ok.json()).toMatchObject({ name: "prod", revision: 2 });

    const stale = await owner.api.patch(path, { name: "again" }, { revision: 1 });
    expect(stale.status).toBe(412);
    expect(await problem(stale)).toMatchObject({ code: "revision_conflict", currentRevision: 2 });

    const malformed = await owner.api.patch(path, { name: "again" }, { headers: { "if-match": "2" } });
    expect(malformed.status).toBe(400);
  });

  test("every mutation writes an audit entry with the request and idempotency key", async ({
    owner,
    deps,
  }) => {
    const res = await owner.api.post(
      "/environments",
      { name: "audited" },
      { idempotencyKey: "audit-key-1", headers: { "x-request-id": "req-audit-1" } },
    );
    const env = (await res.json()) as { id: string };
    const rows = await deps.db.select().from(auditLog);
    expect(rows).toContainEqual(
      expect.objectContaining({
        action: "environment.created",
        targetId: env.id,
        requestId: "req-audit-1",
        idempotencyKey: "audit-key-1",
        organizationId: owner.organizationId,
      }),
    );
  });

  test("validation errors are problem documents naming the field", async ({ owner }) => {
    for (const body of [
      {},
      { name: "" },
      { name: "x".repeat(65) },
      { name: "ok", extra: 1 },
      "not json",
      [1],
    ]) {
      const res = await owner.api.post("/environments", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
  });

  test("an unknown environment id and another organisation's environment are both 404", async ({
    owner,
    stranger,
  }) => {
    const unknown = await owner.api.get(`/environments/${randomUUID()}`);
    expect(unknown.status).toBe(404);
    const foreign = await owner.api.get(`/environments/${stranger.environmentId}`);
    expect(foreign.status).toBe(404);
    expect(await problem(foreign)).toMatchObject({ code: "not_found" });
    const foreignPatch = await owner.api.patch(
      `/environments/${stranger.environmentId}`,
      { name: "mine" },
      { revision: 1 },
    );
    expect(foreignPatch.status).toBe(404);
  });
});

describe("environment lookups batched per event-loop turn", () => {
  test("concurrent reads from two organisations each see exactly their own environment", async ({
    owner,
    stranger,
  }) => {
    const created = await owner.api.post("/environments", { name: "staging" });
    const staging = ((await created.json()) as { id: string }).id;
    const reads = [
      [owner, owner.environmentId, 200],
      [stranger, owner.environmentId, 404],
      [owner, staging, 200],
      [stranger, stranger.environmentId, 200],
      [owner, stranger.environmentId, 404],
      [owner, randomUUID(), 404],
      [stranger, staging, 404],
    ] as const;
    const answers = await Promise.all(reads.map(([tenant, id]) => tenant.api.get(`/environments/${id}`)));
    for (const [i, [tenant, id, status]] of reads.entries()) {
      const res = answers[i];
      expect(res?.status, `read ${i}`).toBe(status);
      if (status === 200) {
        expect(await res?.json(), `read ${i}`).toMatchObject({ id, organizationId: tenant.organizationId });
      }
    }
  });

  test("the batch query matches on the environment and the organisation together", async ({
    deps,
    owner,
    stranger,
  }) => {
    const rows = await selectEnvironments(deps.db, [
      { environmentId: owner.environmentId, organizationId: owner.organizationId },
      { environmentId: owner.environmentId, organizationId: stranger.organizationId },
      { environmentId: stranger.environmentId, organizationId: owner.organizationId },
      { environmentId: stranger.environmentId, organizationId: stranger.organizationId },
      { environmentId: randomUUID(), organizationId: owner.organizationId },
    ]);
    expect(rows.map((r) => [r.id, r.organizationId]).sort()).toEqual(
      [
        [owner.environmentId, owner.organizationId],
        [stranger.environmentId, stranger.organizationId],
      ].sort(),
    );
  });

  test("a committed rename is visible to the next read; a non-canonical id is read on its own", async ({
    owner,
  }) => {
    const path = `/environments/${owner.environmentId}`;
    const renamed = await owner.api.patch(path, { name: "prod" }, { revision: 1 });
    expect(renamed.status).toBe(200);
    const [one, upper] = await Promise.all([
      owner.api.get(path),
      owner.api.get(`/environments/${owner.environmentId.toUpperCase()}`),
    ]);
    expect(await one.json()).toMatchObject({ name: "prod", revision: 2 });
    expect(upper.status).toBe(200);
    expect(await upper.json()).toMatchObject({ id: owner.environmentId, name: "prod" });
  });
});

describe("row lookups under an environment batched per event-loop turn", () => {
  test("concurrent reads of one connection answer only in its environment of its organisation", async ({
    owner,
    stranger,
  }) => {
    const staging = (
      (await (await owner.api.post("/environments", { name: "staging" })).json()) as { id: string }
    ).id;
    const create = (tenant: typeof owner, environmentId: string) =>
      tenant.api.post(`/environments/${environmentId}/mcp-connections`, {
        alias: "runbooks",
        displayName: "Runbooks",
        endpointUrl: "https://mcp.example.com/mcp",
        auth: { kind: "none" },
      });
    const id = ((await (await create(owner, owner.environmentId)).json()) as { id: string }).id;
    // The stranger's own connection under the same alias, so its batch has a row to offer.
    const theirs = ((await (await create(stranger, stranger.environmentId)).json()) as { id: string }).id;
    const reads = [
      [owner, owner.environmentId, id, 200],
      [stranger, owner.environmentId, id, 404],
      [stranger, stranger.environmentId, id, 404],
      [owner, staging, id, 404],
      [owner, owner.environmentId.toUpperCase(), id, 200],
      [owner, owner.environmentId, theirs, 404],
      [stranger, stranger.environmentId, theirs, 200],
      [owner, owner.environmentId, `${id}x`, 404],
      [owner, randomUUID(), id, 404],
    ] as const;
    const answers = await Promise.all(
      reads.map(([tenant, environmentId, connectionId]) =>
        tenant.api.get(`/environments/${environmentId}/mcp-connections/${connectionId}`),
      ),
    );
    for (const [i, [tenant, , connectionId, status]] of reads.entries()) {
      const res = answers[i];
      expect(res?.status, `read ${i}`).toBe(status);
      if (status === 200) {
        expect(await res?.json(), `read ${i}`).toMatchObject({
          id: connectionId,
          environmentId: tenant.environmentId,
        });
      } else {
        expect((await problem(res as Response)).code, `read ${i}`).toBe("not_found");
      }
    }
  });
});
