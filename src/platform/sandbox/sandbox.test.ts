import { execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createLogger } from "../logging/logger.ts";
import type { SandboxMode } from "./create-sandbox.ts";
import { createSandbox } from "./create-sandbox.ts";
import { localSandbox } from "./local-sandbox.ts";
import { SETTLE_AFTER_KILL_MS } from "./run-capped.ts";
import { bwrapRunner, bwrapWorks, processRunner } from "./runners.ts";
import type { Sandbox } from "./sandbox.ts";

/** A tar archive of `files` (what a source host hands the sandbox). */
function tarOf(files: Record<string, string>, extra?: (dir: string) => void): Buffer {
  const dir = mkdtempSync(join(tmpdir(), "patchbay-tar-"));
  try {
    for (const [name, content] of Object.entries(files)) {
      execFileSync("mkdir", ["-p", join(dir, name, "..")]);
      writeFileSync(join(dir, name), content);
    }
    extra?.(dir);
    return execFileSync("tar", ["-cf", "-", "-C", dir, "."]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const hasBwrap = bwrapWorks();
const SECRET = "patchbay-host-secret-7f3a";
let listener: Server;
let port = 0;
const hostFile = join(mkdtempSync(join(tmpdir(), "patchbay-host-")), "private.txt");

beforeAll(async () => {
  process.env.PATCHBAY_SANDBOX_TEST_SECRET = SECRET;
  writeFileSync(hostFile, SECRET);
  listener = createServer((socket) => {
    socket.on("error", () => {});
    socket.end("hello from the host\n");
  });
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  port = (listener.address() as { port: number }).port;
});
afterAll(() => {
  delete process.env.PATCHBAY_SANDBOX_TEST_SECRET;
  listener.close();
  rmSync(join(hostFile, ".."), { recursive: true, force: true });
});

const probe = (p: number) =>
  `node -e "require('net').connect(${p},'127.0.0.1').on('connect',()=>{console.log('REACHED');process.exit(0)}).on('error',e=>{console.log('BLOCKED',e.code);process.exit(0)})"`;

describe.each<[string, Sandbox, boolean]>([
  ["bubblewrap", localSandbox(bwrapRunner), hasBwrap],
  ["process fallback", localSandbox(processRunner), true],
])("%s sandbox", (_name, sandbox, available) => {
  test.runIf(available)(
    "runs the test command at the repository root with a scrubbed environment",
    async () => {
      const ws = await sandbox.createWorkspace({
        archive: tarOf({ "a.txt": "A\n", "t.mjs": "console.log('ok')" }),
      });
      try {
        const result = await ws.run("cat a.txt && node t.mjs && env");
        expect(result).toMatchObject({ exitCode: 0, timedOut: false, outputCapped: false });
        expect(result.outputTail).toContain("A\nok\n");
        expect(result.outputTail).not.toContain(SECRET);
        expect(result.outputTail).not.toContain("DATABASE_URL");
        expect(result.outputTail).toContain("CI=true");
      } finally {
        await ws.dispose();
      }
    },
  );

  test.runIf(available)("a timeout kills the whole process tree; output past the cap is cut", async () => {
    const ws = await sandbox.createWorkspace({ archive: tarOf({ x: "" }) });
    try {
      const started = Date.now();
      const slow = await ws.run("(sleep 30 &) ; sleep 30", { timeoutMs: 500 });
      expect(slow).toMatchObject({ exitCode: null, timedOut: true });
      expect(Date.now() - started).toBeLessThan(5_000);
      const loud = await ws.run("yes patchbay", { maxOutputBytes: 64 * 1024, tailBytes: 100 });
      expect(loud).toMatchObject({ exitCode: null, outputCapped: true });
      expect(loud.outputTail.length).toBeLessThanOrEqual(100);
      const spin = await ws.run("node -e 'for(;;){}'", { cpuSeconds: 1, timeoutMs: 20_000 });
      expect(spin.exitCode).not.toBe(0);
      expect(spin.timedOut).toBe(false);
    } finally {
      await ws.dispose();
    }
  });

  test.runIf(available)("files stay inside the working copy; the proposal is what was written", async () => {
    const ws = await sandbox.createWorkspace({
      archive: tarOf({ "src/order.js": "a\n", "test/order.test.js": "t\n" }, (dir) =>
        execFileSync("ln", ["-s", "/etc", join(dir, "escape")]),
      ),
    });
    try {
      for (const bad of ["../x", "/etc/passwd", ".git/config", "src/../../x", "escape/passwd"]) {
        await expect(ws.readFile(bad), bad).rejects.toMatchObject({ code: "invalid_request" });
      }
      await expect(ws.writeFile("escape/evil", "x")).rejects.toMatchObject({ code: "invalid_request" });
      // Symlinks are neither listed nor followed out of the working copy.
      expect((await ws.listFiles()).map((e) => e.path)).toEqual(["src", "test"]);
      await ws.writeFile("src/order.js", "b\n");
      await ws.writeFile("src/new.js", "n\n");
      await ws.writeFile("test/order.test.js", "t\n"); // unchanged: not part of the change
      await ws.run("echo junk > build.log");
      const change = await ws.proposedChange();
      expect(change.files).toEqual([
        { path: "src/new.js", content: "n\n" },
        { path: "src/order.js", content: "b\n" },
      ]);
      expect(change.created).toEqual(["src/new.js"]);
      expect(change.diff).toContain("-a\n+b");
      expect(change.diff).not.toContain("build.log");
      expect(await ws.searchFiles("n")).toEqual(
        expect.arrayContaining([{ path: "src/new.js", line: 1, text: "n" }]),
      );
    } finally {
      await ws.dispose();
    }
    // Cleaned up afterwards: nothing of the working copy is left on disk.
    expect(existsSync((ws as unknown as { root: string }).root)).toBe(false);
  });
});

describe.skipIf(!hasBwrap)("bubblewrap isolation (skipped where bwrap cannot create namespaces)", () => {
  const sandbox = localSandbox(bwrapRunner);

  test("the host's network is not reachable, not even loopback; the process fallback does reach it", async () => {
    const isolated = await sandbox.createWorkspace({ archive: tarOf({ a: "" }) });
    const open = await localSandbox(processRunner).createWorkspace({ archive: tarOf({ a: "" }) });
    try {
      expect((await isolated.run(probe(port))).outputTail).toContain("BLOCKED");
      // The fallback's documented limit: no network isolation.
      expect((await open.run(probe(port))).outputTail).toContain("REACHED");
    } finally {
      await Promise.all([isolated.dispose(), open.dispose()]);
    }
  });

  test("the host's files are not visible and the system is read-only; only the working copy is writable", async () => {
    const ws = await sandbox.createWorkspace({ archive: tarOf({ a: "" }) });
    try {
      const r = await ws.run(
        `cat ${hostFile} 2>&1; ls /work /root /home 2>&1; touch /usr/x 2>&1; echo written > here.txt && cat here.txt; id -u`,
      );
      expect(r.outputTail).not.toContain(SECRET);
      expect(r.outputTail).toContain("No such file or directory");
      expect(r.outputTail).toContain("Read-only file system");
      expect(r.outputTail).toContain("written\n1000\n");
    } finally {
      await ws.dispose();
    }
  });

  test("a kill at any moment of start-up ends the sandbox at once and leaves no process behind", async () => {
    // bubblewrap killed early in start-up used to orphan its sandbox (--die-with-parent races),
    // which then held the output pipes: the run never ended. Busy loops widen that window as a
    // loaded CI machine does.
    const marker = String(860_000_000 + (process.pid % 100_000));
    // Each loop ends by itself after 60 s, so a failed or aborted run cannot leave them behind.
    const spin = "const end = Date.now() + 60000; while (Date.now() < end);";
    const busy = [0, 1, 2].map(() => spawn(process.execPath, ["-e", spin], { stdio: "ignore" }));
    const ws = await sandbox.createWorkspace({ archive: tarOf({ a: "" }) });
    try {
      let slowest = 0;
      for (let i = 0; i < 60; i++) {
        const r = await ws.run(`(sleep ${marker} &) ; sleep ${marker}`, { timeoutMs: 1 + (i % 40) });
        expect(r.timedOut).toBe(true);
        slowest = Math.max(slowest, r.durationMs);
      }
      // A run the last-resort settle ended lasts its timeout plus that whole settle; every run here
      // was shorter, so each ended by its kill (a bound by construction, not a guess at speed).
      expect(slowest).toBeLessThan(SETTLE_AFTER_KILL_MS);
      // SIGKILL is delivered at once but a dying process lingers in /proc for a moment.
      let left = processesMatching(`sleep ${marker}`);
      for (let wait = 0; left > 0 && wait < 20; wait++) {
        await new Promise((r) => setTimeout(r, 50));
        left = processesMatching(`sleep ${marker}`);
      }
      expect(left).toBe(0);
    } finally {
      for (const p of busy) p.kill("SIGKILL");
      await ws.dispose();
    }
  }, 60_000);
});

/** How many processes have `pattern` in their command line (no shell: it would match itself). */
function processesMatching(pattern: string): number {
  try {
    return Number(execFileSync("pgrep", ["-c", "-f", pattern]).toString());
  } catch {
    return 0; // pgrep exits 1 when nothing matches
  }
}

describe("choosing the sandbox", () => {
  const logger = createLogger({ level: "silent" });
  test.each<[SandboxMode, "development" | "production", boolean, string]>([
    ["auto", "development", true, "bwrap"],
    ["auto", "development", false, "process"],
    ["auto", "production", false, "unavailable"],
    ["bwrap", "development", false, "unavailable"],
    ["process", "production", false, "process"],
    ["process", "production", true, "process"],
  ])("%s in %s with bwrap=%s → %s", async (mode, nodeEnv, bwrapAvailable, kind) => {
    const sandbox = createSandbox({ mode, nodeEnv, logger, bwrapAvailable });
    expect(sandbox.kind).toBe(kind);
    if (kind === "unavailable") {
      await expect(sandbox.createWorkspace({ archive: Buffer.alloc(0) })).rejects.toMatchObject({
        code: "sandbox_unavailable",
      });
    }
    if (kind === "process") expect(sandbox.isolation).toContain("NO network or filesystem isolation");
  });
});
