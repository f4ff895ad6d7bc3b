// Test support: a client of /api/v1 that sends requests by operationId, taking the path and the
// required headers from the committed OpenAPI document, and checks every answer against the
// response the document declares for that status and content type (JSON Schema 2020-12, Ajv).
import { Ajv2020, type ErrorObject } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

type Parameter = { name: string; in: string; required?: boolean };
type MediaTypes = Record<string, { schema?: unknown }>;
type DeclaredResponse = {
  content?: MediaTypes;
  headers?: Record<string, { required?: boolean; schema?: unknown }>;
};
type Operation = {
  operationId: string;
  parameters?: Parameter[];
  responses: Record<string, DeclaredResponse>;
};
export type OpenApiDocument = {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
};

/** One answer as the client got it, for the generated-types check. */
export type Answer = { operationId: string; status: number; mediaType: string; body: unknown };

export type CallOptions = {
  params?: Record<string, string | number>;
  query?: Record<string, string>;
  body?: unknown;
  /** Sends `If-Match: "<revision>"`. */
  revision?: number;
  headers?: Record<string, string>;
  /** The bearer credential; null sends none. Default: the client's key. */
  key?: string | null;
};

const METHODS = ["get", "put", "post", "delete", "patch"];
const DOC_ID = "openapi.json";

/** Every operation of the document by operationId, with its path and method. */
export function operationsOf(doc: OpenApiDocument) {
  const out = new Map<string, Operation & { path: string; method: string }>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (METHODS.includes(method)) out.set(op.operationId, { ...op, path, method });
    }
  }
  return out;
}

// A JSON pointer into the document, as a URI fragment ("/" and "~" escaped, then URI-encoded).
const pointer = (...parts: string[]) =>
  parts.map((p) => `/${encodeURIComponent(p.replaceAll("~", "~0").replaceAll("/", "~1"))}`).join("");

type Schema = Record<string, unknown>;
const isSchema = (value: unknown): value is Schema =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The document with every object schema closed (`additionalProperties: false` where it says
 * nothing), so that a field the API answers but the document does not describe is a mismatch,
 * as it is for a generated client. An `allOf` of object schemas (an extended schema) is merged
 * into one object first: closing each member would refuse the others' fields.
 */
function closeObjects(doc: OpenApiDocument): OpenApiDocument {
  const prefix = "#/components/schemas/";
  const deref = (s: Schema): Schema => {
    const target =
      typeof s.$ref === "string" && s.$ref.startsWith(prefix)
        ? doc.components.schemas[s.$ref.slice(prefix.length)]
        : s;
    return isSchema(target) ? target : s;
  };
  const close = (schema: unknown): unknown => {
    if (!isSchema(schema)) return schema;
    const out: Schema = { ...schema };
    for (const key of ["items", "additionalProperties", "not"])
      if (isSchema(out[key])) out[key] = close(out[key]);
    for (const key of ["allOf", "oneOf", "anyOf", "prefixItems"]) {
      if (Array.isArray(out[key])) out[key] = (out[key] as unknown[]).map(close);
    }
    if (isSchema(out.properties)) {
      out.properties = Object.fromEntries(Object.entries(out.properties).map(([k, v]) => [k, close(v)]));
    }
    const members = Array.isArray(schema.allOf)
      ? (schema.allOf as unknown[]).filter(isSchema).map(deref)
      : [];
    if (members.length > 0 && members.every((m) => m.type === "object" && isSchema(m.properties))) {
      const merged = members.map((m) => close(m) as Schema);
      delete out.allOf;
      Object.assign(out, {
        type: "object",
        properties: Object.assign({}, ...merged.map((m) => m.properties)),
        required: [...new Set(merged.flatMap((m) => (m.required as string[] | undefined) ?? []))],
      });
    }
    if (isSchema(out.properties) && out.additionalProperties === undefined) out.additionalProperties = false;
    return out;
  };
  const closed = structuredClone(doc);
  for (const item of Object.values(closed.paths)) {
    for (const op of Object.values(item)) {
      for (const response of Object.values(op.responses ?? {})) {
        for (const media of Object.values(response.content ?? {})) media.schema = close(media.schema);
      }
    }
  }
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    closed.components.schemas[name] = close(schema);
  }
  return closed;
}

/**
 * A validating client of `app`. Each call names its operation and the status it expects: a
 * different status throws (with the body), so a scenario stops where it went wrong. Everything
 * the document gets wrong about an answer is collected in `mismatches`: an undocumented status,
 * an undocumented content type, a body the declared schema rejects, a missing required header.
 */
export function contractClient(
  app: { request(input: string, init?: RequestInit): Response | Promise<Response> },
  doc: OpenApiDocument,
) {
  const operations = operationsOf(doc);
  // The whole document is one schema resource, so the `#/components/schemas/…` references inside
  // each response schema resolve against it; its top-level fields (`openapi`, `paths`, …) are
  // then unknown keywords to Ajv's strict mode, as are OpenAPI's annotations `example` and
  // `discriminator` (Ajv's own `discriminator` does not take OpenAPI's `mapping`; `oneOf` decides).
  const ajv = new Ajv2020({ allErrors: true, strict: true });
  addFormats.default(ajv);
  ajv.addVocabulary([...Object.keys(doc), "example", "discriminator"]);
  ajv.addSchema(closeObjects(doc) as object, DOC_ID);
  const validators = new Map<string, ReturnType<typeof ajv.compile>>();
  const validatorAt = (ref: string) => {
    let validate = validators.get(ref);
    if (!validate) {
      validate = ajv.compile({ $ref: `${DOC_ID}#${ref}` });
      validators.set(ref, validate);
    }
    return validate;
  };

  const mismatches: string[] = [];
  const answers: Answer[] = [];
  const recorded = new Set<string>();
  /** Statuses seen per operationId. */
  const seen = new Map<string, Set<number>>();

  async function check(operationId: string, res: Response, text: string) {
    const op = operations.get(operationId);
    if (!op) throw new Error(`${operationId} is not in the document`);
    const label = `${operationId} ${res.status}`;
    // OpenAPI's order: the exact status, then its range ("4XX"), then `default`.
    const key = [String(res.status), `${String(res.status)[0]}XX`, "default"].find((k) => op.responses[k]);
    const declared = key === undefined ? undefined : op.responses[key];
    if (key === undefined || !declared) {
      mismatches.push(`${label}: status not documented (${Object.keys(op.responses).join(", ")})`);
      return;
    }
    for (const [name, header] of Object.entries(declared.headers ?? {})) {
      if (header.required && !res.headers.has(name)) mismatches.push(`${label}: no ${name} header`);
    }
    const mediaType = res.headers.get("content-type")?.split(";")[0]?.trim() ?? null;
    if (!declared.content) {
      if (text !== "") mismatches.push(`${label}: a body where none is documented`);
      return;
    }
    if (!mediaType || !declared.content[mediaType]?.schema) {
      mismatches.push(`${label}: content type ${mediaType} not documented`);
      return;
    }
    const body: unknown = JSON.parse(text);
    // Polling reads the same answer many times: each distinct one is type-checked once.
    const distinct = `${operationId} ${res.status} ${JSON.stringify(body)}`;
    if (!recorded.has(distinct)) answers.push({ operationId, status: res.status, mediaType, body });
    recorded.add(distinct);
    const validate = validatorAt(
      pointer("paths", op.path, op.method, "responses", key, "content", mediaType, "schema"),
    );
    if (!validate(body)) {
      const errors = (validate.errors ?? []).map(
        (e: ErrorObject) => `${e.instancePath || "/"} ${e.message} ${JSON.stringify(e.params)}`,
      );
      mismatches.push(`${label} ${mediaType}: ${errors.join("; ")}`);
    }
  }

  return {
    mismatches,
    answers,
    seen,
    /** A client of the same app and document that sends `key` by default. */
    as(key: string) {
      return {
        send: <T = never>(operationId: string, status: number, options: CallOptions = {}) =>
          send<T>(operationId, status, { key, ...options }),
      };
    },
    send,
  };

  async function send<T = never>(
    operationId: string,
    status: number,
    options: CallOptions & { key?: string | null },
  ): Promise<T> {
    const op = operations.get(operationId);
    if (!op) throw new Error(`${operationId} is not in the document`);
    const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const value = options.params?.[name];
      if (value === undefined) throw new Error(`${operationId}: no value for {${name}}`);
      return encodeURIComponent(String(value));
    });
    const query = options.query ? `?${new URLSearchParams(options.query)}` : "";
    const headers: Record<string, string> = {};
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    // Only what the document asks for: a header the server needs but the document does not
    // declare shows up as a failed scenario.
    if (op.parameters?.some((p) => p.in === "header" && p.name === "Idempotency-Key")) {
      headers["idempotency-key"] = crypto.randomUUID();
    }
    if (options.revision !== undefined) headers["if-match"] = `"${options.revision}"`;
    if (options.body !== undefined) headers["content-type"] = "application/json";
    for (const name of Object.keys(options.headers ?? {})) {
      const documented = op.parameters?.some(
        (p) => p.in === "header" && p.name.toLowerCase() === name.toLowerCase(),
      );
      if (!documented) mismatches.push(`${operationId}: request header ${name} not documented`);
    }
    Object.assign(headers, options.headers);
    const res = await app.request(`/api/v1${path}${query}`, {
      method: op.method.toUpperCase(),
      headers,
      body: options.body === undefined ? undefined : JSON.stringify(options.body),
    });
    const text = await res.text();
    if (res.status !== status) {
      throw new Error(`${operationId}: expected ${status}, got ${res.status}: ${text.slice(0, 2_000)}`);
    }
    const statuses = seen.get(operationId) ?? new Set();
    statuses.add(res.status);
    seen.set(operationId, statuses);
    await check(operationId, res, text);
    return (text === "" ? undefined : JSON.parse(text)) as T;
  }
}
