import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, test } from "vitest";
import { beginPglite } from "./pglite-open.ts";

const scratch = mkdtempSync(join(tmpdir(), "patchbay-pglite-open-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

test("a data directory held by a live process is refused; one whose holder is gone is taken over", async () => {
  const dataDir = join(scratch, "held");
  const holder = spawn("sleep", ["60"]);
  try {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, "patchbay.pid"), String(holder.pid));
    expect(() => beginPglite({ kind: "pglite", dataDir })).toThrow(
      `The data directory ${dataDir} is in use by process ${holder.pid}`,
    );
    // Refused before PGlite touched anything.
    expect(existsSync(join(dataDir, "pglite"))).toBe(false);
  } finally {
    holder.kill("SIGKILL");
    await new Promise((resolve) => holder.once("exit", resolve));
  }

  const opening = beginPglite({ kind: "pglite", dataDir });
  expect(opening.creates).toBe(true);
  expect(readFileSync(join(dataDir, "patchbay.pid"), "utf8")).toBe(String(process.pid));
  const client = await opening.client;
  await client.waitReady;
  // The template: a new database starts migrated.
  const { rows } = await client.query<{ n: number }>(
    "select count(*)::int as n from information_schema.tables where table_name = 'organizations'",
  );
  expect(rows[0]?.n).toBe(1);
  await client.close();
  opening.release();
  expect(existsSync(join(dataDir, "patchbay.pid"))).toBe(false);
  const inMemory = beginPglite({ kind: "pglite", dataDir: "memory" });
  expect(inMemory.creates).toBe(true);
  await (await inMemory.client).close();
});
