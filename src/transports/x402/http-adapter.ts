import type { HTTPAdapter } from "@x402/core/server";
import type { Context } from "hono";

/**
 * The SDK's view of a request. Unlike `@x402/hono`'s adapter, the resource URL it reports is
 * the public base URL (behind a proxy the request URL is an internal one), and it can hide
 * the payment header, so an unlockable payment is answered with a plain challenge.
 */
export class RequestAdapter implements HTTPAdapter {
  readonly #c: Context;
  readonly #baseUrl: string;
  readonly #hidePayment: boolean;

  constructor(c: Context, baseUrl: string, options: { hidePayment?: boolean } = {}) {
    this.#c = c;
    this.#baseUrl = baseUrl;
    this.#hidePayment = options.hidePayment ?? false;
  }

  getHeader(name: string): string | undefined {
    if (this.#hidePayment && /^(payment-signature|x-payment)$/i.test(name)) return undefined;
    return this.#c.req.header(name);
  }

  getMethod(): string {
    return this.#c.req.method === "HEAD" ? "GET" : this.#c.req.method;
  }

  getPath(): string {
    return this.#c.req.path;
  }

  getUrl(): string {
    return `${this.#baseUrl}${this.#c.req.path}${new URL(this.#c.req.url).search}`;
  }

  getAcceptHeader(): string {
    return this.#c.req.header("accept") ?? "";
  }

  getUserAgent(): string {
    return this.#c.req.header("user-agent") ?? "";
  }

  getQueryParams(): Record<string, string | string[]> {
    return Object.fromEntries(
      Object.entries(this.#c.req.queries()).map(([key, values]) => [
        key,
        values.length === 1 ? (values[0] ?? "") : values,
      ]),
    );
  }

  getQueryParam(name: string): string | string[] | undefined {
    const values = this.#c.req.queries(name);
    if (!values || values.length === 0) return undefined;
    return values.length === 1 ? values[0] : values;
  }

  async getBody(): Promise<unknown> {
    try {
      return await this.#c.req.json();
    } catch {
      return undefined;
    }
  }
}
