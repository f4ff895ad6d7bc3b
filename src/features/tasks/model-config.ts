import type { LanguageModel } from "ai";
import { ConfigError } from "../../config-error.ts";

export type ModelSettings =
  | { provider: "anthropic"; modelId: string; apiKey: string }
  | { provider: "openai"; modelId: string; apiKey: string }
  | { provider: "openai-compatible"; modelId: string; baseUrl: string; apiKey: string | undefined };

/**
 * `PATCHBAY_MODEL=<provider>:<model>` with the provider's own key variable
 * (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`) or, for self-hosted OpenAI-compatible servers
 * (vLLM, Ollama, LiteLLM), `PATCHBAY_MODEL_BASE_URL` and optionally `PATCHBAY_MODEL_API_KEY`.
 * Unset: no model, and tasks that need one are refused with `model_not_configured`.
 */
export function readModelSettings(env: Record<string, string | undefined>): ModelSettings | undefined {
  const raw = env.PATCHBAY_MODEL?.trim();
  if (!raw) return undefined;
  const match = /^(anthropic|openai|openai-compatible):(.+)$/.exec(raw);
  if (!match?.[1] || !match[2]) {
    throw new ConfigError(
      "PATCHBAY_MODEL",
      "must be anthropic:<model>, openai:<model> or openai-compatible:<model> (with PATCHBAY_MODEL_BASE_URL)",
    );
  }
  const modelId = match[2];
  const required = (name: string): string => {
    const value = env[name]?.trim();
    if (!value) throw new ConfigError(name, `is required when PATCHBAY_MODEL=${match[1]}:…`);
    return value;
  };
  switch (match[1]) {
    case "anthropic":
      return { provider: "anthropic", modelId, apiKey: required("ANTHROPIC_API_KEY") };
    case "openai":
      return { provider: "openai", modelId, apiKey: required("OPENAI_API_KEY") };
    default: {
      const baseUrl = required("PATCHBAY_MODEL_BASE_URL");
      if (!/^https?:\/\//.test(baseUrl))
        throw new ConfigError("PATCHBAY_MODEL_BASE_URL", "must be an http(s) URL");
      return {
        provider: "openai-compatible",
        modelId,
        baseUrl,
        apiKey: env.PATCHBAY_MODEL_API_KEY?.trim() || undefined,
      };
    }
  }
}

/**
 * The configured provider's model. Each provider's package is loaded only when it is the one
 * configured (together ~0.7 MB of JavaScript a start would otherwise evaluate for nothing).
 */
export async function createLanguageModel(settings: ModelSettings): Promise<LanguageModel> {
  switch (settings.provider) {
    case "anthropic": {
      const { createAnthropic } = await import("@ai-sdk/anthropic");
      return createAnthropic({ apiKey: settings.apiKey })(settings.modelId);
    }
    case "openai": {
      const { createOpenAI } = await import("@ai-sdk/openai");
      return createOpenAI({ apiKey: settings.apiKey })(settings.modelId);
    }
    case "openai-compatible": {
      const { createOpenAICompatible } = await import("@ai-sdk/openai-compatible");
      return createOpenAICompatible({
        name: "patchbay-model",
        baseURL: settings.baseUrl,
        ...(settings.apiKey ? { apiKey: settings.apiKey } : {}),
      }).chatModel(settings.modelId);
    }
  }
}
