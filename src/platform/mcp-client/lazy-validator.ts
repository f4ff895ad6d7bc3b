import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/types.js";

/**
 * The MCP SDK's clients and servers build an Ajv validator (with its meta-schemas) each, eagerly;
 * most never validate anything (a server only for elicitation forms, which patchbay never sends).
 * This one builds Ajv on its first use.
 */
export function lazyValidator(): jsonSchemaValidator {
  let ajv: AjvJsonSchemaValidator | undefined;
  return {
    getValidator: (schema) => {
      ajv ??= new AjvJsonSchemaValidator();
      return ajv.getValidator(schema);
    },
  };
}
