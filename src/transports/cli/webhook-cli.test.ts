// `patchbay webhook …` as a child process against this file's app on a loopback port.
import { describe, expect, test } from "../../../test/fixtures.ts";
import { listen } from "../../../test/http.ts";
import { runCli } from "../../../test/lib/cli-child.ts";
import { emitWebhookEvent } from "../../features/webhooks/index.ts";

describe("patchbay webhook", () => {
  test("create prints the secret once; list/get never; deliveries, redeliver, rotate-secret, delete; bad input exits non-zero", async ({
    app,
    deps,
    owner,
  }) => {
    const { url: baseUrl, close } = await listen(app);
    try {
      const run = (...args: string[]) => runCli(baseUrl, owner.apiKey, ["webhook", ...args]);
      const created = await run(
        "create",
        "--url",
        "https://hooks.example.com/patchbay",
        "--event",
        "problem.new",
        "--event",
        "remediation.failed",
        "--json",
      );
      expect(created.code, created.stderr).toBe(0);
      const { endpoint, secret } = JSON.parse(created.stdout) as { endpoint: { id: string }; secret: string };
      expect(secret).toMatch(/^whsec_/);

      const list = await run("list");
      expect(list.code, list.stderr).toBe(0);
      expect(list.stdout).toContain(endpoint.id);
      expect(list.stdout).toContain("problem.new,remediation.failed");
      const get = await run("get", endpoint.id, "--json");
      expect(JSON.parse(get.stdout)).toMatchObject({ id: endpoint.id, enabled: true });
      for (const out of [list.stdout, get.stdout]) expect(out).not.toContain(secret);

      await emitWebhookEvent(deps.db, {
        organizationId: owner.organizationId,
        type: "problem.new",
        at: new Date(),
        data: { problemId: "prb_cli" },
      });
      const deliveries = await run("deliveries", endpoint.id, "--json");
      expect(deliveries.code, deliveries.stderr).toBe(0);
      const page = JSON.parse(deliveries.stdout) as { items: { id: string; status: string }[] };
      expect(page.items).toEqual([expect.objectContaining({ status: "pending" })]);
      const text = await run("deliveries", endpoint.id);
      expect(text.stdout).toContain("problem.new");
      // Still being tried (no worker here): redelivery is refused with its code.
      const pending = await run("redeliver", endpoint.id, page.items[0]?.id ?? "");
      expect(pending.code).not.toBe(0);
      expect(pending.stderr).toContain("delivery_pending");

      const rotated = await run("rotate-secret", endpoint.id);
      expect(rotated.code, rotated.stderr).toBe(0);
      expect(rotated.stdout).toMatch(/whsec_\S+/);
      expect(rotated.stdout).not.toContain(secret);
      const disabled = await run("disable", endpoint.id);
      expect(disabled.stdout).toContain("Disabled");

      const bad = await run("create", "--url", "http://hooks.example.com/", "--event", "problem.new");
      expect(bad.code).not.toBe(0);
      expect(bad.stderr).toContain("invalid_webhook_url");
      const unknown = await run(
        "create",
        "--url",
        "https://hooks.example.com/",
        "--event",
        "problem.exploded",
      );
      expect(unknown.stderr).toContain("unknown_event_type");
      const usage = await run("create", "--url", "https://hooks.example.com/");
      expect(usage.code).toBe(2);

      const deleted = await run("delete", endpoint.id);
      expect(deleted.code, deleted.stderr).toBe(0);
      const gone = await run("get", endpoint.id);
      expect(gone.code).toBe(4);
    } finally {
      await close();
    }
  }, 120_000);
});
