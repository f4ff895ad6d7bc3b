/**
 * bench:soak's output: a row per instance per interval (memory, CPU, requests by status class,
 * throughput), and at the end memory at start, middle and end, the plateau test and the request
 * totals. See bench/soak.ts.
 */
import { availableParallelism } from "node:os";
import { performance } from "node:perf_hooks";
import { machineCpuSeconds, postgresCpuSeconds, processCpuSeconds } from "./processes.ts";
import type { MemoryReport } from "./report-memory.ts";
import { emptyTally, type InstanceCounts, type SoakLoad, type Tally } from "./soak-load.ts";
import { HEAP_RULE, type Point, pointAt, RSS_RULE, type Rule, trend } from "./soak-verdict.ts";

/** One instance's memory as the bench recorded it, timed in seconds from the start of the load. */
export type InstanceMemory = {
  name: string;
  pid: number;
  rss: Point[];
  heapUsed: Point[];
  heapTotal: Point[];
  /** The last report from report-memory.ts, whenever it came. */
  heap: { latest?: MemoryReport };
};

/** Above this share of failed requests the run does not count: the load was not the load described. */
const MAX_FAILED_SHARE = 0.01;
const MiB = 2 ** 20;
/**
 * Start-up on the 2-core machine: the first major collection comes at about 1:40 and the heap takes
 * until minute 4–6 to regrow to its working size (docs/performance.md). Shorter runs get a note.
 */
const WARM_UP_SECONDS = 300;

/** Counters at one moment; an interval's figures are the difference of two. */
export type Snapshot = {
  at: number;
  counts: InstanceCounts[];
  cpu: (number | null)[];
  postgres: number | null;
  self: number;
  machine: { busy: number; total: number } | null;
};

export function snapshot(instances: InstanceMemory[], load: SoakLoad): Snapshot {
  const self = process.cpuUsage();
  return {
    at: performance.now(),
    counts: structuredClone(load.counts),
    cpu: instances.map((i) => processCpuSeconds(i.pid)),
    postgres: postgresCpuSeconds(),
    self: (self.user + self.system) / 1e6,
    machine: machineCpuSeconds(),
  };
}

/** The interval table's columns; print it once before the first interval. */
export const HEADER = [
  "time",
  "inst",
  "RSS MiB",
  "heap used",
  "heap total",
  "CPU %",
  "REST/s",
  "REST 2xx/4xx/5xx/fail",
  "OTLP/s",
  "OTLP 2xx/4xx/5xx/fail",
  "spans/s",
];

export function tableRow(cells: string[]): string {
  return cells
    .map((cell, i) => {
      const width = HEADER[i]?.length ?? 0;
      return i < 2 ? cell.padEnd(Math.max(width, 5)) : cell.padStart(width);
    })
    .join("  ");
}

export function printInterval(instances: InstanceMemory[], start: number, before: Snapshot, after: Snapshot) {
  const seconds = (after.at - before.at) / 1000;
  const elapsed = (after.at - start) / 1000;
  const whole = Math.round(elapsed);
  const time = `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
  const mib = (bytes: number | undefined) => (bytes === undefined ? "—" : (bytes / MiB).toFixed(1));
  const percent = (a: number | null | undefined, b: number | null | undefined) =>
    a === null || a === undefined || b === null || b === undefined
      ? "—"
      : (((b - a) / seconds) * 100).toFixed(0);
  instances.forEach((instance, i) => {
    const was = before.counts[i];
    const now = after.counts[i];
    if (!was || !now) return;
    const rest = difference(was.rest, now.rest);
    const otlp = difference(was.otlp, now.otlp);
    const rate = (tally: Tally) => (sum(tally) / seconds).toFixed(1);
    console.log(
      tableRow([
        time,
        instance.name,
        mib(instance.rss.at(-1)?.value),
        mib(instance.heap.latest?.heapUsed),
        mib(instance.heap.latest?.heapTotal),
        percent(before.cpu[i], after.cpu[i]),
        rate(rest),
        classes(rest),
        rate(otlp),
        classes(otlp),
        ((now.spans - was.spans) / seconds).toFixed(0),
      ]),
    );
  });
  const wall =
    before.machine && after.machine
      ? (after.machine.total - before.machine.total) / availableParallelism()
      : 0;
  const busy =
    before.machine && after.machine && wall > 0
      ? ((after.machine.busy - before.machine.busy) / wall) * 100
      : null;
  // A sum over the backends alive at each reading: one that exited in between takes its CPU time
  // with it, and the difference can come out negative; then there is no figure.
  const postgres =
    before.postgres !== null && after.postgres !== null && after.postgres >= before.postgres
      ? percent(before.postgres, after.postgres)
      : "—";
  console.log(
    `      machine busy ${busy === null ? "—" : busy.toFixed(0)} % of ${availableParallelism() * 100} %; ` +
      `PostgreSQL (all its databases) ${postgres} %, ` +
      `load generator ${percent(before.self, after.self)} %`,
  );
}

const sum = (t: Tally) => t.ok + t.client + t.server + t.failed;
const classes = (t: Tally) => `${t.ok}/${t.client}/${t.server}/${t.failed}`;
const add = (a: Tally, b: Tally): Tally => ({
  ok: a.ok + b.ok,
  client: a.client + b.client,
  server: a.server + b.server,
  failed: a.failed + b.failed,
});
const difference = (a: Tally, b: Tally): Tally => ({
  ok: b.ok - a.ok,
  client: b.client - a.client,
  server: b.server - a.server,
  failed: b.failed - a.failed,
});

/** Memory at start, middle and end, and the plateau test per instance; false unless every series plateaus. */
export function reportMemory(instances: InstanceMemory[], seconds: number): boolean {
  const mib = (bytes: number | undefined) => (bytes === undefined ? "—" : (bytes / MiB).toFixed(1));
  const sign = (n: number) => (n < 0 ? "−" : "+");
  const signed = (bytes: number) => `${sign(bytes)}${mib(Math.abs(bytes))}`;
  const minutes = (fraction: number) => ((seconds * fraction) / 60).toFixed(1);
  const series: Array<[string, (i: InstanceMemory) => Point[], Rule | undefined]> = [
    ["RSS", (i) => i.rss, RSS_RULE],
    ["heap used", (i) => i.heapUsed, HEAP_RULE],
    ["heap total", (i) => i.heapTotal, undefined],
  ];
  console.log(`
Memory, MiB        start   middle      end   (at 0, ${minutes(1 / 2)} and ${minutes(1)} min)`);
  for (const instance of instances) {
    for (const [label, points] of series) {
      const p = points(instance);
      const cells = [p[0]?.value, pointAt(p, seconds / 2)?.value, p.at(-1)?.value].map((v) =>
        mib(v).padStart(8),
      );
      console.log(`${instance.name} ${label.padEnd(15)}${cells.join(" ")}`);
    }
  }
  console.log(
    "\nPlateau test (bench/lib/soak-verdict.ts): a series climbs when its level in the last third " +
      `(${minutes(2 / 3)}–${minutes(1)} min) exceeds its baseline by more than the limit and its last sixth ` +
      "still exceeds its fifth sixth by half the limit.\n" +
      `  RSS: level = median; baseline = its peak in the first ${minutes(2 / 3)} min (V8 grows and shrinks its ` +
      `heap every few minutes); limit = ${RSS_RULE.relative * 100} % or ${RSS_RULE.floorBytes / MiB} MiB, the larger.\n` +
      "  heap used: level = 10th percentile (what it falls back to after collections); baseline = the level " +
      `of the middle third (${minutes(1 / 3)}–${minutes(2 / 3)} min); limit = ${HEAP_RULE.relative * 100} % ` +
      `or ${HEAP_RULE.floorBytes / MiB} MiB, the larger.`,
  );
  const header = ["", "", "baseline", "last third", "growth", "last sixth", "limit", "verdict"];
  const widths = [1, 9, 8, 10, 16, 10, 6, 7];
  const line = (cells: string[]) =>
    cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join("  ");
  console.log(line(header));
  const climbing: string[] = [];
  let undecided = false;
  for (const instance of instances) {
    for (const [label, points, rule] of series) {
      if (!rule) continue;
      const result = trend(points(instance), seconds, rule);
      if (!result) {
        undecided = true;
        console.log(line([instance.name, label, "—", "—", "—", "—", "—", "too few samples"]));
        continue;
      }
      if (result.climbs) climbing.push(`${instance.name} ${label}`);
      const percent = `${sign(result.growth)}${Math.abs((result.growth / result.baseline) * 100).toFixed(1)}`;
      console.log(
        line([
          instance.name,
          label,
          mib(result.baseline),
          mib(result.last),
          `${signed(result.growth)} (${percent} %)`,
          signed(result.stillRising),
          mib(result.threshold),
          result.climbs ? "CLIMBS" : "plateau",
        ]),
      );
    }
  }
  if (seconds < WARM_UP_SECONDS * 1.5) {
    console.log(
      `\nNote: V8 sizes its heap to this load over the first ${WARM_UP_SECONDS / 60} minutes or so; a run this short ` +
        "mostly judges that warm-up.",
    );
  }
  if (climbing.length) console.log(`\nVerdict: memory CLIMBS (${climbing.join(", ")})`);
  else if (undecided) console.log("\nVerdict: none — the run was too short (give it at least a minute)");
  else console.log("\nVerdict: memory plateaus");
  return climbing.length === 0 && !undecided;
}

/** Totals of the run; false when more than MAX_FAILED_SHARE of the requests failed. */
export function reportLoad(load: SoakLoad): boolean {
  const total = { rest: emptyTally(), otlp: emptyTally(), spans: 0 };
  for (const c of load.counts) {
    total.rest = add(total.rest, c.rest);
    total.otlp = add(total.otlp, c.otlp);
    total.spans += c.spans;
  }
  const requests = sum(total.rest) + sum(total.otlp);
  const failed = requests - total.rest.ok - total.otlp.ok;
  console.log(
    `\nRequests (2xx/4xx/5xx/fail): REST ${classes(total.rest)}, OTLP ${classes(total.otlp)}; ${total.spans} spans accepted`,
  );
  for (const [what, n] of load.failures) console.log(`  ${n}× ${what}`);
  if (requests > 0 && failed / requests > MAX_FAILED_SHARE) {
    console.log(`FAILED: ${failed} of ${requests} requests failed; the load was not the load described.`);
    return false;
  }
  return true;
}
