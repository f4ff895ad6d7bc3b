import { build } from "esbuild";
const r = await build({ entryPoints: { server: "src/main.ts" }, bundle: true, format: "esm", platform: "node", target: "node22", outdir: "/tmp/meta/out2", metafile: true, write: false, logLevel: "error",
  external: ["@electric-sql/pglite","@node-rs/argon2","@foundry-rs/anvil","pino","pino-pretty","thread-stream"] });
const inputs = r.metafile.inputs;
// static importers graph
const importers = new Map<string, string[]>();
for (const [f, v] of Object.entries(inputs)) for (const i of v.imports) if (i.kind === "import-statement" || i.kind === "require-call") { const a = importers.get(i.path) ?? []; a.push(f); importers.set(i.path, a); }
// BFS from entry over static edges to find chain to target
const target = process.argv[2];
const start = Object.keys(inputs).find((k) => k === "src/main.ts")!;
const prev = new Map<string, string>(); const q = [start]; const seen = new Set([start]);
while (q.length) { const f = q.shift()!; for (const i of inputs[f].imports) { if (!(i.kind === "import-statement" || i.kind === "require-call")) continue; if (seen.has(i.path) || !inputs[i.path]) continue; seen.add(i.path); prev.set(i.path, f); q.push(i.path); } }
for (const k of Object.keys(inputs)) if (k.includes(target) && seen.has(k)) { const chain = [k]; let x = k; while (prev.has(x)) { x = prev.get(x)!; chain.push(x); } console.log(chain.reverse().join("\n  -> ")); break; }
