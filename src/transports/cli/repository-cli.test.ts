// `patchbay environment repository …` as a child process against this file's app on a loopback port.
import { afterAll } from "vitest";
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen } from "../../../test/http.ts";
import { runCli } from "../../../test/lib/cli-child.ts";
import { type GitRepo, makeGitRepo } from "../../../test/lib/git-repo.ts";

const repos: GitRepo[] = [];
afterAll(() => {
  for (const r of repos) r.remove();
});

describe("patchbay environment repository", () => {
  test("create, list, get, delete; usage errors exit 2; conflicts exit 5; not found exit 4", async ({
    app,
    owner,
  }) => {
    const { url: baseUrl, close } = await listen(app);
    try {
      const repo = makeGitRepo({ "index.js": "module.exports = 1;\n" });
      repos.push(repo);
      const run = (...args: string[]) =>
        runCli(baseUrl, owner.apiKey, [
          "environment",
          "repository",
          ...args,
          "--environment",
          owner.environmentId,
        ]);

      const created = await run(
        "create",
        "--provider",
        "local-git",
        "--path",
        repo.path,
        "--test-command",
        "node --test",
        "--service",
        "checkout",
        "--service",
        "orders",
        "--json",
      );
      expect(created.code, created.stderr).toBe(0);
      const body = JSON.parse(created.stdout) as { id: string; services: string[]; idempotencyKey: string };
      expect(body.services).toEqual(["checkout", "orders"]);
      expect(body.idempotencyKey).toMatch(/^[0-9a-f-]{36}$/);

      const list = await run("list");
      expect(list.code).toBe(0);
      expect(list.stdout).toMatch(/^ID\s+PROVIDER\s+LOCATION/);
      expect(list.stdout).toContain(body.id);
      expect(list.stdout).toContain("checkout,orders");

      const got = await run("get", body.id);
      expect(got.stdout).toContain(`Path            ${repo.path}`);

      const again = await run(
        "create",
        "--provider",
        "local-git",
        "--path",
        repo.path,
        "--test-command",
        "x",
        "--service",
        "b",
      );
      expect(again.code).toBe(5);
      expect(again.stderr).toContain("error: repository_taken");

      const usage = await run("create", "--provider", "svn", "--test-command", "x", "--service", "a");
      expect(usage.code).toBe(2);
      const noEnv = await runCli(baseUrl, owner.apiKey, ["environment", "repository", "list"]);
      expect(noEnv.code).toBe(2);
      expect(noEnv.stderr).toContain(
        "--environment <uuid or name> is required on every environment repository command",
      );

      const refused = await run("delete", body.id);
      expect(refused.code).toBe(2);
      expect((await run("delete", body.id, "--yes")).code).toBe(0);
      const gone = await run("get", body.id);
      expect(gone.code).toBe(4);
    } finally {
      await close();
    }
  });
});
