import { describe, expect, test } from "vitest";
import type { TranscriptEntry } from "../../platform/db/schema/tasks.ts";
import { committedFinish, committedWrites, transcriptMessages } from "../tasks/transcript-messages.ts";

const entries: TranscriptEntry[] = [
  { type: "user", text: "Fix prb_1." },
  { type: "assistant", text: "Looking." },
  { type: "tool_call", callId: "c1", tool: "read_file", input: { path: "a.js" } },
  { type: "tool_call", callId: "c2", tool: "write_file", input: { path: "a.js", content: "x" } },
  {
    type: "tool_result",
    callId: "c1",
    tool: "read_file",
    outcome: "ok",
    output: { outcome: "ok", content: "y" },
  },
  { type: "tool_result", callId: "c2", tool: "write_file", outcome: "ok", output: { outcome: "ok" } },
  { type: "tool_call", callId: "c3", tool: "write_file", input: { path: "../x", content: "no" } },
  { type: "tool_result", callId: "c3", tool: "write_file", outcome: "error", output: { outcome: "error" } },
  { type: "tool_call", callId: "c4", tool: "finish", input: { summary: "done" } },
];

describe("resuming from a transcript", () => {
  test("messages alternate assistant (text + calls) and tool results, in order", () => {
    expect(transcriptMessages(entries)).toEqual([
      { role: "user", content: "Fix prb_1." },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Looking." },
          { type: "tool-call", toolCallId: "c1", toolName: "read_file", input: { path: "a.js" } },
          {
            type: "tool-call",
            toolCallId: "c2",
            toolName: "write_file",
            input: { path: "a.js", content: "x" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "read_file",
            output: { type: "json", value: { outcome: "ok", content: "y" } },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "write_file",
            output: { type: "json", value: { outcome: "ok" } },
          },
        ],
      },
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "c3",
            toolName: "write_file",
            input: { path: "../x", content: "no" },
          },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c3",
            toolName: "write_file",
            output: { type: "json", value: { outcome: "error" } },
          },
        ],
      },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c4", toolName: "finish", input: { summary: "done" } }],
      },
    ]);
  });

  test("only writes that succeeded are replayed; a finish counts once its result is committed", () => {
    expect(committedWrites(entries)).toEqual([{ path: "a.js", content: "x" }]);
    expect(committedFinish(entries)).toBeUndefined();
    const done: TranscriptEntry[] = [
      ...entries,
      { type: "tool_result", callId: "c4", tool: "finish", outcome: "ok", output: { outcome: "ok" } },
    ];
    expect(committedFinish(done)).toBe("done");
  });
});
