import type { AssistantModelMessage, JSONValue, ModelMessage, ToolModelMessage } from "ai";
import type { TranscriptEntry } from "../../platform/db/schema/tasks.ts";

/**
 * The conversation so far, rebuilt from the stored transcript: a run resumed on another worker
 * continues after the last committed step instead of asking the model again.
 */
export function transcriptMessages(entries: TranscriptEntry[]): ModelMessage[] {
  const messages: ModelMessage[] = [];
  let assistant: AssistantModelMessage | undefined;
  let tool: ToolModelMessage | undefined;
  for (const entry of entries) {
    if (entry.type === "user") {
      assistant = undefined;
      tool = undefined;
      messages.push({ role: "user", content: entry.text });
    } else if (entry.type === "assistant" || entry.type === "tool_call") {
      if (!assistant || tool) {
        assistant = { role: "assistant", content: [] };
        tool = undefined;
        messages.push(assistant);
      }
      const content = assistant.content as Exclude<AssistantModelMessage["content"], string>;
      if (entry.type === "assistant") content.push({ type: "text", text: entry.text });
      else
        content.push({
          type: "tool-call",
          toolCallId: entry.callId,
          toolName: entry.tool,
          input: entry.input,
        });
    } else {
      if (!tool) {
        tool = { role: "tool", content: [] };
        messages.push(tool);
      }
      tool.content.push({
        type: "tool-result",
        toolCallId: entry.callId,
        toolName: entry.tool,
        output: { type: "json", value: (entry.output ?? null) as JSONValue },
      });
    }
  }
  return messages;
}

/**
 * The summary of a `finish` call that was already committed: a worker that died after the
 * agent's last step but before the run moved on must not ask the model again.
 */
export function committedFinish(entries: TranscriptEntry[]): string | undefined {
  const call = entries.findLast((e) => e.type === "tool_call" && e.tool === "finish");
  if (call?.type !== "tool_call") return undefined;
  const done = entries.some((e) => e.type === "tool_result" && e.callId === call.callId);
  const summary = (call.input as { summary?: unknown }).summary;
  return done && typeof summary === "string" ? summary : undefined;
}

/** The writes the agent made, in order: replayed onto a fresh working copy when a run resumes. */
export function committedWrites(entries: TranscriptEntry[]): { path: string; content: string }[] {
  const ok = new Set(
    entries.flatMap((e) =>
      e.type === "tool_result" && e.tool === "write_file" && e.outcome === "ok" ? [e.callId] : [],
    ),
  );
  return entries.flatMap((e) => {
    if (e.type !== "tool_call" || e.tool !== "write_file" || !ok.has(e.callId)) return [];
    const { path, content } = e.input as { path?: unknown; content?: unknown };
    return typeof path === "string" && typeof content === "string" ? [{ path, content }] : [];
  });
}
