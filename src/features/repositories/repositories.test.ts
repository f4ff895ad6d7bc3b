import { mkdirSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import { afterAll } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { problem } from "../../../test/http.ts";
import { type GitRepo, makeGitRepo } from "../../../test/lib/git-repo.ts";
import { auditLog } from "../../platform/db/schema/audit-log.ts";

const repos: GitRepo[] = [];
const repo = (files: Record<string, string> = { "README.md": "# app\n" }, branch?: string) => {
  const r = makeGitRepo(files, branch ? { branch } : {});
  repos.push(r);
  return r;
};
afterAll(() => {
  for (const r of repos) r.remove();
});

const body = (path: string, extra: Record<string, unknown> = {}) => ({
  provider: "local-git",
  path,
  defaultBranch: "main",
  testCommand: "node --test",
  services: ["checkout"],
  ...extra,
});

type Repository = { id: string; path: string; services: string[]; provider: string; environmentId: string };

describe("repositories", () => {
  test("register a local-git repository, list it, get it, delete it (audited)", async ({ owner, deps }) => {
    const r = repo();
    const base = `/environments/${owner.environmentId}/repositories`;
    const res = await owner.api.post(base, body(r.path));
    expect(res.status, await res.clone().text()).toBe(201);
    const created = (await res.json()) as Repository;
    expect(created).toMatchObject({
      provider: "local-git",
      path: r.path,
      defaultBranch: "main",
      testCommand: "node --test",
      services: ["checkout"],
      environmentId: owner.environmentId,
    });
    expect(created.id).toMatch(/^rep_/);
    expect(res.headers.get("location")).toBe(`/api/v1${base}/${created.id}`);

    const list = (await (await owner.api.get(base)).json()) as { items: Repository[] };
    expect(list.items.map((i) => i.id)).toEqual([created.id]);
    expect(await (await owner.api.get(`${base}/${created.id}`)).json()).toEqual(created);

    expect((await owner.api.delete(`${base}/${created.id}`)).status).toBe(204);
    expect((await owner.api.get(`${base}/${created.id}`)).status).toBe(404);
    const actions = (await deps.db.select().from(auditLog))
      .filter((a) => a.targetId === created.id)
      .map((a) => a.action);
    expect(actions).toEqual(["repository.created", "repository.deleted"]);
  });

  test.for<[string, (root: GitRepo) => string, string]>([
    ["a relative path", () => "relative/repo", "invalid_repository_path"],
    ["a `..` segment", (r) => `${r.path}/../${r.path.split("/").at(-1)}`, "invalid_repository_path"],
    ["a `.` segment", (r) => `${r.path}/.`, "invalid_repository_path"],
    ["a trailing slash", (r) => `${r.path}/`, "invalid_repository_path"],
    [
      "a doubled slash",
      (r) => r.path.replace("/patchbay-repo", "//patchbay-repo"),
      "invalid_repository_path",
    ],
    ["a missing directory", (r) => `${r.path}-missing`, "invalid_repository_path"],
    [
      "a symlink to a repository",
      (r) => {
        const link = `${r.path}-link`;
        symlinkSync(r.path, link);
        return link;
      },
      "invalid_repository_path",
    ],
    [
      "a subdirectory of a work tree",
      (r) => {
        mkdirSync(join(r.path, "sub"));
        return join(r.path, "sub");
      },
      "invalid_repository",
    ],
    ["a plain directory", (r) => join(r.path, ".git", "refs"), "invalid_repository"],
  ])("refuses %s with 422", async ([, pathOf, code], { owner }) => {
    const r = repo();
    const res = await owner.api.post(`/environments/${owner.environmentId}/repositories`, body(pathOf(r)));
    expect(res.status).toBe(422);
    expect((await problem(res)).code).toBe(code);
  });

  test("refuses a default branch the repository does not have, and a NUL in the path", async ({ owner }) => {
    const r = repo({ "a.txt": "a" }, "trunk");
    const base = `/environments/${owner.environmentId}/repositories`;
    const missing = await owner.api.post(base, body(r.path));
    expect(missing.status).toBe(422);
    expect(await problem(missing)).toMatchObject({ code: "invalid_repository" });
    expect((await owner.api.post(base, body(r.path, { defaultBranch: "trunk" }))).status).toBe(201);
    // Refused before the route reads it, as any NUL in a request is (http/unstorable-text.ts).
    const nul = await owner.api.post(base, body(`${r.path}\u0000x`));
    expect(nul.status).toBe(400);
    expect(await problem(nul)).toMatchObject({ code: "invalid_request" });
  });

  test("a service maps to one repository per environment; a path registers once", async ({ owner }) => {
    const [a, b] = [repo(), repo()];
    const base = `/environments/${owner.environmentId}/repositories`;
    const first = (await (await owner.api.post(base, body(a.path))).json()) as Repository;
    const taken = await owner.api.post(base, body(b.path));
    expect(taken.status).toBe(409);
    expect(await problem(taken)).toMatchObject({
      code: "service_taken",
      service: "checkout",
      repositoryId: first.id,
    });
    const twice = await owner.api.post(base, body(a.path, { services: ["billing"] }));
    expect(await problem(twice)).toMatchObject({ code: "repository_taken" });
    expect((await owner.api.post(base, body(b.path, { services: ["billing"] }))).status).toBe(201);
  });

  test("validation: provider, services and test command are required and bounded", async ({ owner }) => {
    const r = repo();
    const base = `/environments/${owner.environmentId}/repositories`;
    for (const bad of [
      { ...body(r.path), provider: "svn" },
      { ...body(r.path), services: [] },
      { ...body(r.path), services: ["a", "a"] },
      { ...body(r.path), testCommand: "" },
      { ...body(r.path), testCommand: "npm test\nrm -rf /" },
      { ...body(r.path), extra: true },
    ]) {
      const res = await owner.api.post(base, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect((await problem(res)).code).toBe("invalid_request");
    }
  });

  test("github registrations need a configured App", async ({ owner }) => {
    const res = await owner.api.post(`/environments/${owner.environmentId}/repositories`, {
      provider: "github",
      installationId: 1,
      fullName: "acme/checkout",
      testCommand: "npm test",
      services: ["checkout"],
    });
    expect(res.status).toBe(503);
    expect((await problem(res)).code).toBe("provider_unavailable");
  });

  test("tenancy: another organisation's environment and repositories are 404", async ({
    owner,
    stranger,
  }) => {
    const r = repo();
    const created = (await (
      await owner.api.post(`/environments/${owner.environmentId}/repositories`, body(r.path))
    ).json()) as Repository;
    const theirs = `/environments/${owner.environmentId}/repositories`;
    expect((await stranger.api.get(theirs)).status).toBe(404);
    expect((await stranger.api.get(`${theirs}/${created.id}`)).status).toBe(404);
    expect((await stranger.api.delete(`${theirs}/${created.id}`)).status).toBe(404);
    expect((await stranger.api.post(theirs, body(repo().path))).status).toBe(404);
    // Their own environment does not see it either.
    const own = `/environments/${stranger.environmentId}/repositories`;
    expect((await stranger.api.get(`${own}/${created.id}`)).status).toBe(404);
  });

  test("security: no key 401; a member may read but not register", async ({ owner, app, deps }) => {
    const base = `/environments/${owner.environmentId}/repositories`;
    expect((await app.request(`/api/v1${base}`)).status).toBe(401);
    const { createMemberKey } = await import("../../../test/lib/members.ts");
    const member = await createMemberKey(deps, app, owner);
    expect((await member.get(base)).status).toBe(200);
    const res = await member.post(base, body(repo().path));
    expect(res.status).toBe(403);
    expect((await problem(res)).code).toBe("forbidden");
  });
});
