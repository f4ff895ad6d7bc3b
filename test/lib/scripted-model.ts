import type {
  LanguageModelV3CallOptions,
  LanguageModelV3Content,
  LanguageModelV3GenerateResult,
} from "@ai-sdk/provider";
import { MockLanguageModelV3 } from "ai/test";

/** One model turn: the tool calls it makes and/or the text it says. */
export type Turn = { toolCalls?: { name: string; input: Record<string, unknown> }[]; text?: string };

/** A turn that calls one tool. */
export const call = (name: string, input: Record<string, unknown> = {}): Turn => ({
  toolCalls: [{ name, input }],
});

/**
 * The AI SDK's own mock language model, scripted turn by turn. Each turn may look at what the
 * model was given (its prompt, with the previous tool results, and the tools offered), so a
 * script can react like a real model would. `calls` keeps every request the loop made.
 *
 * `turnOf` picks the turn to play from the request (0-based) instead of counting this model's
 * own calls: a process that takes over a conversation another process began must answer where
 * the conversation is (see `conversationTurn`), and its tool call ids must not repeat earlier ones.
 */
export function scriptedModel(
  turns: (Turn | ((options: LanguageModelV3CallOptions) => Turn | Promise<Turn>))[],
  opts: { turnOf?: (options: LanguageModelV3CallOptions) => number } = {},
) {
  const calls: LanguageModelV3CallOptions[] = [];
  let index = 0;
  const model = new MockLanguageModelV3({
    doGenerate: async (options): Promise<LanguageModelV3GenerateResult> => {
      calls.push(options);
      index = opts.turnOf ? opts.turnOf(options) + 1 : index + 1;
      const script = turns[index - 1];
      if (!script) throw new Error(`scripted model ran out of turns (turn ${index})`);
      const turn = typeof script === "function" ? await script(options) : script;
      const content: LanguageModelV3Content[] = [];
      if (turn.text) content.push({ type: "text", text: turn.text });
      for (const [i, call] of (turn.toolCalls ?? []).entries()) {
        content.push({
          type: "tool-call",
          toolCallId: `call_${index}_${i}`,
          toolName: call.name,
          input: JSON.stringify(call.input),
        });
      }
      return {
        content,
        finishReason: { unified: turn.toolCalls?.length ? "tool-calls" : "stop", raw: undefined },
        usage: {
          inputTokens: { total: 100, noCache: 100, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 20, text: 20, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  return { model, calls, offeredTools: (turn = 0) => (calls[turn]?.tools ?? []).map((t) => t.name) };
}

/** The tool results the loop handed back to the model in its last request. */
export function lastToolResults(
  options: LanguageModelV3CallOptions,
): { toolName: string; output: unknown }[] {
  const out: { toolName: string; output: unknown }[] = [];
  for (const message of options.prompt) {
    if (message.role !== "tool") continue;
    for (const part of message.content) {
      if (part.type === "tool-result") out.push({ toolName: part.toolName, output: part.output });
    }
  }
  return out;
}

/** How many answers the model has given in this conversation: the 0-based turn it is asked for. */
export function conversationTurn(options: LanguageModelV3CallOptions): number {
  return options.prompt.filter((message) => message.role === "assistant").length;
}
