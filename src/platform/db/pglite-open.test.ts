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
});

test("an in-memory database starts from the migrated template too, and an empty one has no schema", async () => {
  const tables = async (target: Parameters<typeof beginPglite>[0]) => {
    const opening = beginPglite(target);
    expect(opening.creates).toBe(true);
    const client = await opening.client;
    try {
      const { rows } = await client.query<{ n: number }>(
        "select count(*)::int as n from information_schema.tables where table_name = 'organizations'",
      );
      return rows[0]?.n;
    } finally {
      await client.close();
    }
  };
  // Each test file's database is in memory: without the template it would be created and
  // migrated from nothing (~2 s of WebAssembly each) before the migrations found work to do.
  expect(await tables({ kind: "pglite", dataDir: "memory" })).toBe(1);
  expect(await tables({ kind: "pglite", dataDir: "memory", empty: true })).toBe(0);
});

test("an embedded database's buffer pool is 32MB (PGlite's initdb writes 128MB in postgresql.conf)", async () => {
  const dataDir = join(scratch, "buffers");
  const opening = beginPglite({ kind: "pglite", dataDir });
  const client = await opening.client;
  try {
    const { rows } = await client.query<{ shared_buffers: string }>("show shared_buffers");
    expect(rows[0]?.shared_buffers).toBe("32MB");
  } finally {
    await client.close();
    opening.release();
  }
});
