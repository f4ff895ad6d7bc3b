import type { TranscriptEntry } from "../../platform/db/schema/tasks.ts";

/** The writes the agent made, in order: replayed onto a fresh working copy when a run resumes. */
export function committedWrites(entries: TranscriptEntry[]): { path: string; content: string }[] {
  const ok = new Set(
    entries.flatMap((e) =>
      e.type === "tool_result" && e.tool === "write_file" && e.outcome === "ok" ? [e.callId] : [],
    ),
  );
  const writes: { path: string; content: string }[] = [];
  for (const e of entries) {
    if (e.type !== "tool_call" || e.tool !== "write_file" || !ok.has(e.callId)) continue;
    const input = e.input as { path?: unknown; content?: unknown };
    if (typeof input.path === "string" && typeof input.content === "string") {
      writes.push({ path: input.path, content: input.content });
    }
  }
  return writes;
}
